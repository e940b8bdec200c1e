"""Reads of runs for pages and exports: the summary line, the pairs as CSV rows, a pair's panes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.translation import get_language, gettext, ngettext, pgettext

from dedup_site.numerals import LocalCount, local_digits
from dedup_site.prepared import Prepared
from screening.engine import evidence, langcheck, overlap, suggest
from screening.models import CandidatePair, Document, ScreeningRun
from screening.runs import display, reasons

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


def _shown(number) -> str:
    """A parameter of the run (0.3, 0.7), or a figure written out (50%), in the interface language's digits."""
    return local_digits(str(number), get_language() or "")


def run_summary(run: ScreeningRun) -> str:
    """One line on the run, in the interface's language (English in commands and jobs)."""
    s = run.stats
    if run.status == ScreeningRun.Status.FAILED:
        reason = run.error.strip().splitlines()[-1] if run.error else gettext("unknown error")
        return gettext("run {pk} failed: {reason}").format(pk=LocalCount(run.pk), reason=reason)
    if run.status != ScreeningRun.Status.COMPLETE:
        return gettext("run {pk} is {status}").format(pk=LocalCount(run.pk), status=gettext(run.status))
    documents = s.get("documents", 0)
    parts = [ngettext("run {pk} complete: {n} document", "run {pk} complete: {n} documents", documents).format(
        pk=LocalCount(run.pk), n=LocalCount(documents))]
    if run.exact:
        groups, grouped = s.get("exact_groups", 0), s.get("exact_grouped_documents", 0)
        singletons, pairs = s.get("exact_singletons", 0), s.get("exact_pairs", 0)
        parts.append(pgettext("between the figures of a pass in a run's summary", ", ").join([
            ngettext("exact pass: {n} group of 2+ covering", "exact pass: {n} groups of 2+ covering", groups).format(
                n=LocalCount(groups)) + " " + ngettext("{n} document", "{n} documents", grouped).format(
                n=LocalCount(grouped)),
            ngettext("{n} singleton", "{n} singletons", singletons).format(n=LocalCount(singletons)),
            ngettext("{n} candidate pair", "{n} candidate pairs", pairs).format(n=LocalCount(pairs))]))
    if run.near:
        n = s["near"]
        parts.append(gettext(
            "near pass: {signed} signed ({empty} without shingles), {candidates}, {stored} stored (Jaccard ≥ "
            "{floor}; {below} below), {above} at or above {threshold}").format(
            signed=LocalCount(n["signed"]), empty=LocalCount(n["empty"]),
            candidates=ngettext("{n} LSH candidate", "{n} LSH candidates", n["lsh_candidates"]).format(
                n=LocalCount(n["lsh_candidates"])),
            stored=ngettext("{n} pair", "{n} pairs", n["stored"]).format(n=LocalCount(n["stored"])),
            floor=_shown(run.config["near"]["storage_floor"]), below=LocalCount(n["below_floor"]),
            above=LocalCount(n["at_or_above_threshold"]), threshold=_shown(run.config["near"]["threshold"])))
        if index := n.get("index"):
            new = index["new_documents"]
            parts.append(ngettext("incremental: built the LSH index ({n} document)",
                                  "incremental: built the LSH index ({n} documents)", new).format(n=LocalCount(new))
                         if index["built_now"] else
                         ngettext("incremental: {n} new document looked up in the LSH index of {before}",
                                  "incremental: {n} new documents looked up in the LSH index of {before}",
                                  new).format(n=LocalCount(new), before=LocalCount(index["indexed_before"])))
    clusters = s.get("clusters", 0)
    parts.append(ngettext("{n} cluster", "{n} clusters", clusters).format(n=LocalCount(clusters)))
    # The separators are the language's own (Persian ؛ and ،, Chinese ； and ，), like the sentences between them.
    return pgettext("between the parts of a run's summary", "; ").join(parts)


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


def _html(message: str, **values) -> str:
    """A translated message with %(name)s values, escaped; each value isolated (a language tag, a figure)."""
    braced = re.sub(r"%\((\w+)\)s", r"{\1}", conditional_escape(message).replace("{", "{{").replace("}", "}}"))
    return format_html(braced, **{k: format_html("<bdi>{}</bdi>", v) for k, v in values.items()})


def _language_rows(e: evidence.Evidence, detections) -> list[tuple[str, str, bool]]:
    """A language twin: which of its two tags the texts read as, when the check is sure of it."""
    sure = [d for d in detections or () if d.confident]
    if not e.languages_differ or not sure:
        return []
    reads = format_html_join(" · ", "<bdi>{}</bdi> ({})", ((d.language, _shown(f"{d.confidence:.2f}"))
                                                            for d in detections))
    if langcheck.base(e.languages[0]) == langcheck.base(e.languages[1]):
        return [(gettext("The texts read as"), format_html("{}: {}", reads, _html(
            gettext("both tags name %(language)s"), language=langcheck.base(e.languages[0]))), False)]
    matches = {langcheck.matching_tag(e.languages, d) for d in sure}
    if matches == {0}:
        which = _html(gettext("the left's tag (%(tag)s) is right"), tag=e.languages[0])
    elif matches == {1}:
        which = _html(gettext("the right's tag (%(tag)s) is right"), tag=e.languages[1])
    else:
        which = gettext("neither tag matches") if matches == {None} else gettext("the two texts disagree")
    return [(gettext("The texts read as"), format_html("{}: {}", reads, which), True)]


def _share(value) -> str:
    return "—" if value is None else _shown(f"{value:.0%}")


def _located_rows(e: evidence.Evidence) -> list[tuple[str, str, bool]]:
    """Where the shared text lies and whether the words are the same in another order (kept since issue 38)."""
    if not e.shared_where:
        return []
    shared = reasons.shown_shared(overlap.describe(e.shared_where, tuple(e.shared_edges), e.shared_blocks,
                                                   e.shared_chars, e.rest_similarity))
    marks = [m for m, on in ((gettext("reads as boilerplate"), e.boilerplate),
                             (gettext("in quotation marks"), e.quoted)) if on]
    rows = [(gettext("Shared text"), shared + (f" ({', '.join(marks)})" if marks else ""), e.shared_where == "edges")]
    if (e.token_overlap or 0) >= suggest.SAME_WORDS and e.moved_blocks:
        rows.append((gettext("The same words in another order"),
                     ngettext("{n} block moved", "{n} blocks moved", e.moved_blocks).format(
                         n=LocalCount(e.moved_blocks)), True))
    return rows


def evidence_rows(data: dict, detections=None) -> list[tuple[str, str, bool]]:
    """The pair's evidence as (what, value, worth a look) rows for the pair page, in the interface's language;
    [] for pairs of runs made before evidence was kept. `detections`: both documents' language checks, which a
    twin's row reads."""
    if not data:
        return []
    e = evidence.Evidence.from_dict(data)
    left_lang, right_lang = e.languages
    orders = {"left-older": gettext("left is older"), "right-older": gettext("right is older"),
              "same": gettext("the same"), "": gettext("unknown")}
    return [
        (gettext("Left's shingles found in the right"), _share(e.containment_left), False),
        (gettext("Right's shingles found in the left"), _share(e.containment_right), False),
        (gettext("The same once normalised"), gettext("yes") if e.same_normalised else gettext("no"), False),
        (gettext("Words changed · moved"), f"{_share(e.changed_share)} · {_share(e.moved_share)}", False),
        (gettext("Length, shorter ÷ longer"), _share(e.length_ratio), False),
        *_located_rows(e),
        (gettext("Language tags"), format_html("<bdi>{}</bdi> · <bdi>{}</bdi>{}", left_lang, right_lang,
                                               gettext(" — they differ") if e.languages_differ else ""),
         e.languages_differ),
        *_language_rows(e, detections),
        (gettext("Source"), gettext("the same") if e.same_source else gettext("different"), False),
        (gettext("Version"), orders[e.version_order], False),
        (gettext("Collected"), orders[e.collected_order], False),
    ]
