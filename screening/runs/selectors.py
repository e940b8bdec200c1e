"""Reads of runs for pages and exports: the summary line, the pairs as CSV rows, a pair's panes."""

from __future__ import annotations

import json
from collections.abc import Iterator

from django.utils.translation import gettext

from dedup_site.prepared import Prepared
from screening.engine import evidence, langcheck, overlap, suggest
from screening.models import CandidatePair, Document, ScreeningRun
from screening.runs import display

PAIR_COLUMNS = ["left_id", "right_id", "pass", "jaccard", "minhash_estimate", "left_source_id", "right_source_id",
                "revision_signals", "template_share", "jaccard_without_template", "cluster", "suggested_verdict",
                "suggestion_confidence", "evidence", "left_detected_language", "right_detected_language"]


def pair_rows(run: ScreeningRun) -> Iterator[list[str]]:
    """The run's candidate pairs as CSV rows (PAIR_COLUMNS), in a fixed order."""
    pairs = (
        CandidatePair.objects.filter(run=run)
        .order_by("pass_name", "-jaccard", "left__doc_id", "right__doc_id")
        .values_list("left__doc_id", "right__doc_id", "pass_name", "jaccard", "minhash_estimate",
                     "left__source_id", "right__source_id", "revision_signals", "template_share",
                     "jaccard_without_template", "cluster", "suggested_verdict", "suggestion_confidence", "evidence",
                     "left__detected_language", "right__detected_language")
    )

    def number(value) -> str:
        return "" if value is None else repr(float(value))

    for (left, right, pass_name, jaccard, estimate, left_source, right_source, signals, share, without,
         cluster_number, suggested, confidence, found, left_reads, right_reads) in pairs.iterator(chunk_size=5000):
        yield [left, right, pass_name, number(jaccard), number(estimate), left_source, right_source,
               "; ".join(f"{a} → {b}" for _, a, b in signals), number(share), number(without),
               "" if cluster_number is None else str(cluster_number), suggested, number(confidence),
               json.dumps(found, ensure_ascii=False, separators=(",", ":")) if found else "", left_reads, right_reads]


def _n(count: int, one: str, many: str = "") -> str:
    return f"{count} {one if count == 1 else many or one + 's'}"


def run_summary(run: ScreeningRun) -> str:
    s = run.stats
    if run.status == ScreeningRun.Status.FAILED:
        return f"run {run.pk} failed: {run.error.strip().splitlines()[-1] if run.error else 'unknown error'}"
    if run.status != ScreeningRun.Status.COMPLETE:
        return f"run {run.pk} is {run.status}"
    parts = [f"run {run.pk} complete: {_n(s.get('documents', 0), 'document')}"]
    if run.exact:
        parts.append(
            f"exact pass: {_n(s.get('exact_groups', 0), 'group')} of 2+ covering "
            f"{_n(s.get('exact_grouped_documents', 0), 'document')}, {_n(s.get('exact_singletons', 0), 'singleton')}, "
            f"{_n(s.get('exact_pairs', 0), 'candidate pair')}"
        )
    if run.near:
        n = s["near"]
        parts.append(
            f"near pass: {n['signed']} signed ({n['empty']} without shingles), "
            f"{_n(n['lsh_candidates'], 'LSH candidate')}, {_n(n['stored'], 'pair')} stored (Jaccard >= "
            f"{run.config['near']['storage_floor']}; {n['below_floor']} below), {n['at_or_above_threshold']} at or "
            f"above {run.config['near']['threshold']}"
        )
        if index := n.get("index"):
            parts.append(f"incremental: built the LSH index ({_n(index['new_documents'], 'document')})"
                         if index["built_now"] else
                         f"incremental: {_n(index['new_documents'], 'new document')} looked up in the LSH index of "
                         f"{index['indexed_before']}")
    parts.append(_n(s.get("clusters", 0), "cluster"))
    return "; ".join(parts)


_DOCUMENTS = Prepared(lambda left, right: Document.objects.select_related("upload__source").filter(
    pk__in=[left, right]), kinds="ii")


def with_documents(pair: CandidatePair) -> CandidatePair:
    """Attach both documents with their upload and source file, read in a second query: one nine-table
    join for a pair page cost PostgreSQL more planning than everything else it did."""
    documents = {d.pk: d for d in _DOCUMENTS.objects(pair.left_id, pair.right_id)}
    pair.left, pair.right = documents[pair.left_id], documents[pair.right_id]
    return pair


def pair_context(pair: CandidatePair) -> dict:
    """What the pair panes show (the review page and the run's pair page): matched runs coloured alike on
    both sides, the token diff with its revision signals, shared shingles and raw excerpts (drawn once and
    kept: screening.runs.display), and the evidence."""
    drawn, counts = display.pair_panes(pair)
    detections = (detection_of(pair.left), detection_of(pair.right))
    return {"pair": pair, "panes": drawn, "counts": counts, "evidence": evidence_rows(pair.evidence, detections),
            "reads": {"left": _reads_otherwise(pair.left.language, detections[0]),
                      "right": _reads_otherwise(pair.right.language, detections[1])}}


def detection_of(document: Document) -> langcheck.Detection:
    """What the language check found (langcheck.UNKNOWN for a document not checked yet)."""
    if document.language_confidence is None:
        return langcheck.UNKNOWN
    return langcheck.Detection(document.detected_language, document.language_confidence)


def _reads_otherwise(tag: str, found: langcheck.Detection) -> str:
    return f"{found.language} ({found.confidence:.2f})" if langcheck.disagrees(tag, found) else ""


def _language_rows(e: evidence.Evidence, detections) -> list[tuple[str, str, bool]]:
    """A language twin: which of its two tags the texts read as, when the check is sure of it."""
    sure = [d for d in detections or () if d.confident]
    if not e.languages_differ or not sure:
        return []
    reads = " · ".join(f"{d.language} ({d.confidence:.2f})" for d in detections)
    if langcheck.base(e.languages[0]) == langcheck.base(e.languages[1]):
        return [(gettext("The texts read as"), gettext("%(reads)s: both tags name %(language)s") % {
            "reads": reads, "language": langcheck.base(e.languages[0])}, False)]
    matches = {langcheck.matching_tag(e.languages, d) for d in sure}
    if matches == {0}:
        which = gettext("the left's tag (%(tag)s) is right") % {"tag": e.languages[0]}
    elif matches == {1}:
        which = gettext("the right's tag (%(tag)s) is right") % {"tag": e.languages[1]}
    else:
        which = gettext("neither tag matches") if matches == {None} else gettext("the two texts disagree")
    return [(gettext("The texts read as"), f"{reads}: {which}", True)]


def _share(value) -> str:
    return "—" if value is None else f"{value:.0%}"


def _located_rows(e: evidence.Evidence) -> list[tuple[str, str, bool]]:
    """Where the shared text lies and whether the words are the same in another order (kept since issue 38)."""
    if not e.shared_where:
        return []
    shared = overlap.describe(e.shared_where, tuple(e.shared_edges), e.shared_blocks, e.shared_chars,
                              e.rest_similarity)
    marks = [m for m, on in (("reads as boilerplate", e.boilerplate), ("in quotation marks", e.quoted)) if on]
    rows = [("Shared text", shared + (f" ({', '.join(marks)})" if marks else ""), e.shared_where == "edges")]
    if (e.token_overlap or 0) >= suggest.SAME_WORDS and e.moved_blocks:
        rows.append(("The same words in another order",
                     f"{e.moved_blocks} block{'s' if e.moved_blocks != 1 else ''} moved", True))
    return rows


def evidence_rows(data: dict, detections=None) -> list[tuple[str, str, bool]]:
    """The pair's evidence as (what, value, worth a look) rows for the pair page; [] for pairs of runs made
    before evidence was kept. `detections`: both documents' language checks, which a twin's row reads."""
    if not data:
        return []
    e = evidence.Evidence.from_dict(data)
    left_lang, right_lang = e.languages
    orders = {"left-older": "left is older", "right-older": "right is older", "same": "the same", "": "unknown"}
    return [
        ("Left's shingles found in the right", _share(e.containment_left), False),
        ("Right's shingles found in the left", _share(e.containment_right), False),
        ("The same once normalised", "yes" if e.same_normalised else "no", False),
        ("Words changed · moved", f"{_share(e.changed_share)} · {_share(e.moved_share)}", False),
        ("Length, shorter ÷ longer", _share(e.length_ratio), False),
        *_located_rows(e),
        ("Language tags", f"{left_lang} · {right_lang}" + (" — they differ" if e.languages_differ else ""),
         e.languages_differ),
        *_language_rows(e, detections),
        ("Source", "the same" if e.same_source else "different", False),
        ("Version", orders[e.version_order], False),
        ("Collected", orders[e.collected_order], False),
    ]
