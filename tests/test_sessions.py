"""Sessions: Django's database sessions, read through a kept query, with the same answers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.backends import db as django_db
from django.contrib.sessions.models import Session
from django.urls import reverse
from django.utils import timezone

from dedup_site.sessions import SessionStore


@pytest.mark.django_db
def test_a_session_loads_what_djangos_store_loads(editor_client, django_assert_num_queries):
    key = editor_client.session.session_key
    with django_assert_num_queries(1):
        ours = SessionStore(key).load()
    assert ours == django_db.SessionStore(key).load() and "_auth_user_id" in ours
    assert editor_client.get(reverse("review:queue")).status_code == 200


@pytest.mark.django_db
def test_an_expired_or_unknown_session_is_empty_and_logs_out(editor_client):
    key = editor_client.session.session_key
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    store = SessionStore(key)
    assert store.load() == {} and store.session_key is None
    assert django_db.SessionStore(key).load() == {}
    response = editor_client.get(reverse("review:queue"))
    assert response.status_code == 302 and "/login/" in response.url
    assert SessionStore("no-such-session-key-at-all").load() == {}


@pytest.mark.django_db
def test_logging_out_ends_the_session_for_every_later_request(editor_client):
    key = editor_client.session.session_key
    assert editor_client.post(reverse("logout")).status_code in (200, 302)
    assert SessionStore(key).load() == {}
    assert editor_client.get(reverse("review:queue")).status_code == 302
