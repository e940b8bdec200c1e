"""Log-in, roles, CSRF, security headers and production settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.test import Client
from django.urls import reverse

from dedup_site import settings as real_settings


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["screening:corpus_list", "admin:index"])
def test_anonymous_user_is_sent_to_login(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302 and "/login/?next=" in response.url


@pytest.mark.django_db
def test_anonymous_user_cannot_read_a_status_endpoint(client):
    response = client.get(reverse("screening:upload_status", args=[1]))
    assert response.status_code == 302 and response.url.startswith(reverse("login"))


@pytest.mark.django_db
def test_login_page_is_public(client):
    assert client.get(reverse("login")).status_code == 200


@pytest.mark.django_db
def test_editor_cannot_upload(editor_client):
    response = editor_client.post(reverse("screening:upload_create"), {"corpus": "x"})
    assert response.status_code == 403
    assert b"Not allowed" in response.content and b"Traceback" not in response.content


@pytest.mark.django_db
def test_editor_can_browse_corpora(editor_client):
    assert editor_client.get(reverse("screening:corpus_list")).status_code == 200


@pytest.mark.django_db
def test_editor_sees_no_upload_form(editor_client):
    assert b'enctype="multipart/form-data"' not in editor_client.get(reverse("screening:corpus_list")).content


@pytest.mark.django_db
def test_upload_refuses_get(admin_client):
    assert admin_client.get(reverse("screening:upload_create")).status_code == 405


@pytest.mark.django_db
def test_csrf_is_enforced_on_upload(admin_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    response = client.post(reverse("screening:upload_create"), {"corpus": "x"})
    assert response.status_code == 403


@pytest.mark.django_db
def test_csrf_is_enforced_on_login(admin_user):
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("login"), {"username": admin_user.username, "password": "correct horse battery"})
    assert response.status_code == 403


@pytest.mark.django_db
def test_pages_send_csp_and_frame_headers(admin_client):
    response = admin_client.get(reverse("screening:corpus_list"))
    csp = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "object-src 'none'" in csp
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_passwords_are_hashed_with_argon2():
    assert real_settings.PASSWORD_HASHERS[0] == "django.contrib.auth.hashers.Argon2PasswordHasher"
    with pytest.MonkeyPatch.context():
        from django.test.utils import override_settings

        with override_settings(PASSWORD_HASHERS=real_settings.PASSWORD_HASHERS):
            assert make_password("correct horse battery").startswith("argon2$")


@pytest.mark.django_db
def test_repeated_failed_logins_lock_the_account_out(admin_user):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(reverse("login"), {"username": admin_user.username, "password": "wrong"})
    response = client.post(reverse("login"), {"username": admin_user.username, "password": "correct horse battery"})
    assert response.status_code == 429
    assert b"Too many failed log-in attempts" in response.content


@pytest.mark.django_db
def test_right_password_logs_in(admin_user):
    client = Client()
    response = client.post(reverse("login"), {"username": admin_user.username, "password": "correct horse battery"})
    assert response.status_code == 302 and response.url == reverse("screening:corpus_list")


def _check_deploy(extra_env: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DEDUP_"))}
    env.update(DJANGO_SETTINGS_MODULE="dedup_site.settings", DEDUP_DATA_DIR=str(settings.DATA_DIR / "deploy"))
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=Path(__file__).resolve().parent.parent, env=env, capture_output=True, text=True, timeout=120,
    )


def test_check_deploy_is_clean_in_production():
    result = _check_deploy({
        "DEDUP_PRODUCTION": "1",
        "DJANGO_SECRET_KEY": "k3V9-pQz_7rTb2#Lw8sN4mXe6@Yh1jUc5*Fd0gAo!Ri2vBn$Ks7tWq",
        "DJANGO_ALLOWED_HOSTS": "dedup.example.org",
    })
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_to_start_without_a_secret_key():
    result = _check_deploy({"DEDUP_PRODUCTION": "1", "DJANGO_ALLOWED_HOSTS": "dedup.example.org"})
    assert result.returncode != 0 and "needs DJANGO_SECRET_KEY" in result.stderr


@pytest.fixture
def no_chmod(monkeypatch):
    """A file that is chmod-ed after it was written was readable by others in between: with chmod a no-op
    and the usual umask, only a file created 0600 ends up private."""
    monkeypatch.setattr(os, "chmod", lambda *args, **kwargs: None)
    monkeypatch.setattr(Path, "chmod", lambda *args, **kwargs: None)
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_signing_key_is_created_private(no_chmod, tmp_path):
    from review.sheets import signing

    signing.load_or_create_key(tmp_path / "keys" / "site.pem")
    assert _mode(tmp_path / "keys" / "site.pem") == 0o600
    assert [p.name for p in (tmp_path / "keys").iterdir()] == ["site.pem"]  # no temporary file left


def test_generated_secret_key_is_created_private(no_chmod, tmp_path, monkeypatch):
    monkeypatch.delenv("DJANGO_SECRET_KEY", raising=False)
    monkeypatch.setattr(real_settings, "DATA_DIR", tmp_path)
    key = real_settings._secret_key()
    assert _mode(tmp_path / "secret_key") == 0o600 and real_settings._secret_key() == key


@pytest.mark.django_db
def test_generated_admin_password_file_is_created_private(no_chmod, tmp_path, settings, monkeypatch):
    from django.core.management import call_command

    monkeypatch.delenv("DEDUP_ADMIN_PASSWORD", raising=False)
    settings.DATA_DIR = tmp_path
    call_command("bootstrap", stdout=open(os.devnull, "w"))  # noqa: SIM115
    assert _mode(tmp_path / "admin-password.txt") == 0o600
