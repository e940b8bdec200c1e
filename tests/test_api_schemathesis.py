"""Schemathesis against the live schema of a running server: every operation of /api/v1/schema/, requests
generated from it (valid and invalid ones) with real tokens on a seeded corpus and run, so that ids reach
objects. No answer may be a server error, and every answer must conform to the schema (its status code
documented, its content type, headers and body the documented shape). Bounded: a few examples an operation,
about a minute. (Editors' 403s on every operation: tests/test_permissions.py.)"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.contrib.auth.models import Group

from dedup_site import tokens
from dedup_site.roles import ADMINS, ARBITERS, EDITORS
from review.sheets import sheet_exports
from screening.models import CandidatePair
from tests.factories import reviewer, seed_run

ROOT = Path(__file__).resolve().parent.parent
ST = Path(sys.executable).with_name("st")
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,"
          "response_schema_conformance")


def schemathesis(base: str, token: str, tmp_path: Path, examples: int) -> subprocess.CompletedProcess:
    return subprocess.run([  # noqa: S603 - our own virtualenv's schemathesis, against the test server
        str(ST), "run", f"{base}/api/v1/schema/?format=json", "--header", f"Authorization: Bearer {token}",
        "--checks", CHECKS, "--max-examples", str(examples), "--seed", "40", "--workers", "4",
        "--phases", "coverage,fuzzing", "--request-timeout", "30", "--no-color",
        "--suppress-health-check", "all", "--report-dir", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.django_db(transaction=True)
def test_schemathesis_finds_no_server_error_and_every_answer_conforms(live_server, import_records, tmp_path,
                                                                      settings):
    settings.DEDUP_API_RATE = ""  # the generated requests come faster than a pipeline's
    run = seed_run(import_records, reviews_required=2)
    assert CandidatePair.objects.filter(run=run).exists()
    # A complete signed sheet, so that the sheet's files are fetched too (its CSV and its JSON manifest).
    sheet_exports.sheet_export_build(export=sheet_exports.sheet_export_create(run=run))
    # One account with every role (a real admin who also reviews and arbitrates): no operation is only 403s.
    everyone = reviewer("fuzz-admin", "admin")
    everyone.groups.add(*Group.objects.filter(name__in=[EDITORS, ARBITERS]))
    assert everyone.groups.filter(name=ADMINS).exists()
    # Three examples an operation past the coverage phase's own (boundaries, missing and wrong fields, bodies
    # that are not objects): about 800 requests, 50-60 s on two busy cores.
    began = time.monotonic()
    text = tokens.token_create(user=everyone, actor=everyone, name="fuzz")[1]
    result = schemathesis(live_server.url, text, tmp_path, 3)
    print("schemathesis:", f"{time.monotonic() - began:.1f} s;", result.stdout.strip().splitlines()[-1])
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
    assert "Tested: 22" in result.stdout and "failures" not in result.stdout.splitlines()[-1], result.stdout[-5000:]
