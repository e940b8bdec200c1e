"""The sample corpus the README's walkthrough offers gives what the README says it gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from screening.models import CandidatePair

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "guides.jsonl"


@pytest.mark.django_db
def test_sample_corpus_gives_copies_revisions_and_a_language_twin(import_records):
    import_records("guides", [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()])
    call_command("screen", "--corpus", "guides", "--exact", "--near", "--policy", "persian-arabic-fold-v1",
                 "--sync")
    pairs = {(p.left.doc_id, p.right.doc_id): p for p in CandidatePair.objects.select_related("left", "right")}
    assert len(pairs) == 12 and len({p.cluster for p in pairs.values()}) == 3
    kinds = {s[0] for p in pairs.values() for s in p.revision_signals}
    assert kinds == {"number", "month", "unit"}
    assert pairs["fa-guide-v1", "fa-guide-v2"].suggested_verdict == "valid-revision"
    assert pairs["fa-guide-arabic-keyboard", "fa-guide-v1"].suggested_verdict == "merge-entry"
    twin = pairs["en-guide-mirror", "en-guide-tagged-de"]
    assert twin.evidence["languages"] == ["en", "de"] and twin.suggestion_confidence < 0.95
