"""`make audit`: which pins count as vulnerable, clean or not checked, from PyPI's JSON answers.

PyPI itself is not called here (the suite must not depend on the network); its answers are given in the
shape its JSON API documents, the one `make audit` reads in CI."""

from __future__ import annotations

from scripts.audit_deps import audit_pin, pins

ADVISORY = {"id": "PYSEC-2099-1", "aliases": ["CVE-2099-1"], "fixed_in": ["1.1"], "link": "https://osv.dev/x",
            "withdrawn": None}


def pypi(answers: dict[str, dict | None]):
    asked = []

    def fetch(url: str) -> dict | None:
        asked.append(url)
        return answers.get(url)

    return fetch, asked


def test_pins_are_read_from_a_lock_with_comments_and_markers():
    text = "# header\nDjango==6.1.3\nnumpy==2.5.5 ; python_version >= '3.12'  # why\n\n-e .\nrq == 2.12.0\n"
    assert pins(text) == [("Django", "6.1.3"), ("numpy", "2.5.5"), ("rq", "2.12.0")]


def test_an_advisory_on_the_pinned_release_makes_it_vulnerable():
    fetch, _ = pypi({"https://pypi.org/pypi/lib/1.0/json": {"vulnerabilities": [ADVISORY]}})
    finding = audit_pin("lib", "1.0", fetch)
    assert finding.status == "vulnerable" and finding.advisories == [ADVISORY]


def test_a_withdrawn_advisory_does_not_count():
    withdrawn = {**ADVISORY, "withdrawn": "2099-01-02T00:00:00Z"}
    fetch, _ = pypi({"https://pypi.org/pypi/lib/1.0/json": {"vulnerabilities": [withdrawn]}})
    assert audit_pin("lib", "1.0", fetch).status == "clean"


def test_without_the_release_endpoint_a_pin_on_the_latest_release_uses_the_project_answer():
    project = {"info": {"version": "1.0"}, "vulnerabilities": [ADVISORY]}
    fetch, asked = pypi({"https://pypi.org/pypi/lib/json": project})
    assert audit_pin("lib", "1.0", fetch).status == "vulnerable"
    assert asked == ["https://pypi.org/pypi/lib/1.0/json", "https://pypi.org/pypi/lib/json"]
    project = {"info": {"version": "1.0"}, "vulnerabilities": []}
    fetch, _ = pypi({"https://pypi.org/pypi/lib/json": project})
    assert audit_pin("lib", "1.0", fetch).status == "clean"


def test_an_older_pin_is_not_checked_rather_than_called_clean():
    # The project answer describes the latest release only; its silence says nothing about 0.9.
    fetch, _ = pypi({"https://pypi.org/pypi/lib/json": {"info": {"version": "1.0"}, "vulnerabilities": []}})
    finding = audit_pin("lib", "0.9", fetch)
    assert finding.status == "unchecked" and "1.0" in finding.note


def _lock(name: str) -> dict[str, str]:
    from pathlib import Path

    return dict((n.lower(), v) for n, v in pins((Path(__file__).resolve().parent.parent / name).read_text()))


def test_pins_are_read_from_a_hashed_lock():
    text = "# via x\nclick==8.5.1 \\\n    --hash=sha256:ab \\\n    --hash=sha256:cd\n    # via rq\n"
    assert pins(text) == [("click", "8.5.1")]


def test_the_runtime_lock_holds_no_development_tool_and_the_development_lock_keeps_its_pins():
    runtime, dev = _lock("requirements.lock"), _lock("requirements-dev.lock")
    tools = {"pytest", "pytest-django", "ruff", "import-linter", "vulture", "playwright", "rapidfuzz", "pip-tools"}
    assert tools & set(runtime) == set() and tools <= set(dev)
    assert {name: (runtime[name], dev[name]) for name in set(runtime) & set(dev) if runtime[name] != dev[name]} == {}


def test_every_pin_of_both_locks_has_its_hashes():
    from pathlib import Path

    for name in ("requirements.lock", "requirements-dev.lock"):
        text = (Path(__file__).resolve().parent.parent / name).read_text()
        blocks = [b for b in text.split("\n") if "==" in b and not b.lstrip().startswith("#")]
        assert blocks and all(b.rstrip().endswith("\\") for b in blocks), name  # each pin runs on to a --hash
