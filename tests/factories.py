"""Shared test factories: reviewers with a role, a corpus of exact copies, a completed run."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from dedup_site.accounts import ALL_ROLES, password_owned
from dedup_site.trail import own_entries
from screening import runs
from screening.engine.minhash import NearConfig
from screening.models import Corpus, ScreeningRun
from tests.seeds import SEED001

PASSWORD = "correct horse battery"


def reviewer(username: str, role: str = "editor", **extra):
    """An active account with one role (`editor`, `arbiter` or `admin`, as the Users page names them), whose
    password its owner set."""
    with own_entries():  # the personas exist before a test acts: the trail a test reads is its own acts'
        user = get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)
        user.groups.add(Group.objects.get(name=ALL_ROLES[role]))
    password_owned(user=user)
    return user


def superuser(username: str):
    """A superuser whose password its owner set (as `bootstrap` makes the first admin): one made by
    create_superuser alone has a password someone else chose, and may manage no account."""
    with own_entries():
        user = get_user_model().objects.create_superuser(username=username, password=PASSWORD)
    password_owned(user=user)
    return user


def reviewers(n: int, role: str = "editor") -> list:
    return [reviewer(f"{role}-{i:02d}", role) for i in range(n)]


def copies(pairs: int, corpus: str) -> list[dict]:
    """Records making `pairs` exact pairs: each text twice."""
    return [{"doc_id": f"{corpus}-{i}-{side}", "language": "en", "body": f"guide number {i} of {corpus}"}
            for i in range(pairs) for side in "ab"]


def completed_run(corpus: str, *, exact: bool = True, near: bool = False, incremental: bool = False,
                  reviews_required: int = 1, **near_config) -> ScreeningRun:
    """A run of the corpus done in this process, its results published (the service's defaults: exact only)."""
    run = runs.run_create(corpus=Corpus.objects.get(name=corpus), exact=exact, near=near, incremental=incremental,
                          reviews_required=reviews_required, near_config=NearConfig(**near_config))
    return runs.run_execute(run=run)


def imported_run(import_records, corpus: str, records: list[dict], **run) -> ScreeningRun:
    """Import the records into a new corpus and run it (see completed_run)."""
    import_records(corpus, records)
    return completed_run(corpus, **run)


def seed_run(import_records, *, reviews_required: int = 1, corpus: str = "zh", records=None) -> ScreeningRun:
    """The seed 001 corpus (or the records given) run with both passes at the default configuration."""
    return imported_run(import_records, corpus, SEED001 if records is None else records, near=True,
                        reviews_required=reviews_required)


def copies_run(import_records, pairs: int, *, reviews_required: int = 1, corpus: str = "copies") -> ScreeningRun:
    """An exact-pass run with `pairs` exact pairs, all wanting review."""
    return imported_run(import_records, corpus, copies(pairs, corpus), reviews_required=reviews_required)
