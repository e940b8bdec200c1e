#!/usr/bin/env python3
"""Check every pin of both locks (requirements.lock, requirements-dev.lock) against PyPI's vulnerability
records (`make audit`).

PyPI publishes, for each release, the advisories from the Python Packaging Advisory Database (OSV data):
the same records pip-audit's default service reads. pip-audit asks PyPI's per-version endpoint
(/pypi/NAME/VERSION/json); where a proxy answers that with 404, as on our build machines, the project
endpoint (/pypi/NAME/json) still gives the records for the latest release, which are exact for a pin that
*is* the latest. A pin that is neither is reported as not checked. Exit status: 1 when any pin has a
known vulnerability; 0 otherwise, even when PyPI cannot be reached (that is said loudly instead).
Standard library only, so it runs before anything is installed.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PYPI = "https://pypi.org/pypi"
Fetch = Callable[[str], "dict | None"]  # the JSON at a URL, None for 404


@dataclass
class Finding:
    name: str
    version: str
    status: str  # "vulnerable" | "clean" | "unchecked"
    advisories: list[dict] = field(default_factory=list)
    note: str = ""


def pins(text: str) -> list[tuple[str, str]]:
    """(name, version) of every `name==version` line; comments, markers and hashes ignored."""
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].split(";", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            out.append((name.strip(), version.split()[0].strip()))
    return out


def live(advisories: list[dict]) -> list[dict]:
    return [a for a in advisories if not a.get("withdrawn")]


def audit_pin(name: str, version: str, fetch: Fetch) -> Finding:
    release = fetch(f"{PYPI}/{name}/{version}/json")
    if release is not None:
        advisories = live(release.get("vulnerabilities", []))
        return Finding(name, version, "vulnerable" if advisories else "clean", advisories)
    project = fetch(f"{PYPI}/{name}/json")
    if project is None:
        return Finding(name, version, "unchecked", note="PyPI does not know this project")
    latest = project["info"]["version"]
    if latest != version:
        return Finding(name, version, "unchecked",
                       note=f"PyPI here answers only for the latest release ({latest})")
    advisories = live(project.get("vulnerabilities", []))
    return Finding(name, version, "vulnerable" if advisories else "clean", advisories)


def fetch_json(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=20) as response:  # noqa: S310 - a fixed https URL
            return json.load(response)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    locks = [Path(a) for a in argv[1:]] or [root / "requirements.lock", root / "requirements-dev.lock"]
    return max(audit_lock(lock) for lock in locks)


def audit_lock(lock: Path) -> int:
    findings = []
    for name, version in pins(lock.read_text(encoding="utf-8")):
        try:
            findings.append(audit_pin(name, version, fetch_json))
        except (OSError, ValueError) as error:
            print(f"NOT AUDITED: PyPI could not be read ({error}); no pin of {lock.name} was checked.")
            return 0
    for f in findings:
        if f.status == "vulnerable":
            for a in f.advisories:
                fixed = ", ".join(a.get("fixed_in") or []) or "no fixed release"
                print(f"VULNERABLE {f.name}=={f.version}: {a.get('id')} ({', '.join(a.get('aliases') or [])}); "
                      f"fixed in {fixed}; {a.get('link', '')}")
        elif f.status == "unchecked":
            print(f"not checked {f.name}=={f.version}: {f.note}")
    bad = [f for f in findings if f.status == "vulnerable"]
    clean = sum(f.status == "clean" for f in findings)
    print(f"{lock.name}: {len(findings)} pins, {clean} without known vulnerabilities, {len(bad)} vulnerable, "
          f"{len(findings) - clean - len(bad)} not checked")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
