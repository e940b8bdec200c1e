"""A suggested verdict for a pair, with a confidence and the reasons it rests on (no Django imports).

Rules by default (`suggest`); a corpus with enough labels gets a model learned from them instead
(screening.evaluation.model). A suggestion never records a judgement: it orders and filters the queue and
can be confirmed by a reviewer.
"""

from __future__ import annotations

from dataclasses import dataclass

from screening.engine.evidence import Evidence
from screening.engine.overlap import describe
from screening.vocabulary import Verdict

MERGE, REVISION, QUOTE, KEEP = Verdict.MERGE_ENTRY, Verdict.VALID_REVISION, Verdict.PUBLIC_QUOTE, Verdict.KEEP_BOTH
SMALL_CHANGE = 0.15  # share of tokens changed: above it, a text was rewritten, not revised or copied
LIGHT_EDIT = 0.06
SIGNAL_NAMES = {"number": "number", "date": "date", "month": "month", "sign": "sign", "unit": "unit",
                "negation": "negation"}


@dataclass(frozen=True)
class Suggestion:
    verdict: str
    confidence: float
    reasons: tuple[str, ...]
    source: str = "rules"  # rules | model


def _provenance(e: Evidence) -> list[str]:
    out = []
    if e.same_source:
        out.append("same source" + (f", versions in order ({e.version_order})" if e.version_order not in ("", "same")
                                    else ", same version" if e.version_order == "same" else ""))
    else:
        out.append("another source")
    return out


def _signal_reasons(e: Evidence) -> list[str]:
    return [f"{SIGNAL_NAMES.get(kind, kind)} {before} → {after}" for kind, before, after in e.signals[:3]]


SAME_WORDS = 0.97  # tokens shared with repeats, of both texts': the same words, whatever their order
SAME_TOKENS = 1.0  # ...and not one word more or less: only the order differs
UNRELATED_REST = 0.25  # remainders sharing at most this of their word pairs were written apart
OWN_REST = 0.15  # each text keeps at least this share of its tokens outside the shared block
# ...or this much inside a frame (the shared text at the top and the bottom of both): a body between a licence
# printed twice, each copy up to twice the body's length, is a text of its own, however short beside them.
FRAMED_REST = 0.05
QUOTED_SHARE = 0.3  # of the shorter text in a block set in quotation marks: a quotation, marked as one


def _shared_text(e: Evidence) -> str:
    return "shared: " + describe(e.shared_where, tuple(e.shared_edges), e.shared_blocks, e.shared_chars,
                                 e.rest_similarity)


def _template(e: Evidence) -> Suggestion | None:
    """Two texts under a shared header or footer: the shared text at the edges of both, two remainders of
    their own written apart, and the shared text boilerplate by its words, by corpus frequency or by its
    shape (at the top and the bottom of both). Not when it stands in quotation marks: a quotation many texts
    make is frequent in the corpus too."""
    without = e.jaccard_without_template
    if not e.quoted and e.template_share is not None and e.template_share >= 0.5 and (without or 0) < 0.3:
        return Suggestion(KEEP, 0.9, (f"{e.template_share:.0%} of what they share is template text",
                                      "different texts under a shared template"))
    if e.shared_where != "edges" or e.quoted or e.rest_similarity is None:
        return None
    framed = e.shared_edges[0] == e.shared_edges[1] == "top and bottom"
    own = (min(e.rest_left or 0, e.rest_right or 0) >= (FRAMED_REST if framed else OWN_REST)
           and e.rest_similarity <= UNRELATED_REST)
    frequent = e.template_share is not None and e.template_share >= 0.5
    if own and (e.boilerplate or frequent or framed):
        why = "it reads as boilerplate" if e.boilerplate else "a frame at the top and bottom of both" if framed \
            else f"{e.template_share:.0%} of it is template text"
        return Suggestion(KEEP, 0.9, (_shared_text(e), why, "different texts under a shared header or footer"))
    return None


def _marked_quotation(e: Evidence) -> Suggestion | None:
    """A shared block set in quotation marks in one of the texts, and a fair part of the shorter one: the marks
    say it is quoted, however little of the rest either text shares."""
    if e.quoted and e.containment >= QUOTED_SHARE:
        return Suggestion(QUOTE, 0.85, (_shared_text(e), "it stands in quotation marks",
                                        f"{e.containment:.0%} of the shorter text is found in the longer one"))
    return None


def _reordered(e: Evidence) -> Suggestion | None:
    """The same words in another order: blocks moved, whatever their size. With exactly the same tokens no
    detail can have changed (a signal there is two moved stretches aligned), whatever the diff says."""
    same = (e.token_overlap or 0) >= SAME_TOKENS and (e.moved_blocks or e.changed_share > 0)
    if same or ((e.token_overlap or 0) >= SAME_WORDS and e.moved_blocks and e.changed_share <= LIGHT_EDIT):
        return Suggestion(MERGE, 0.97, (f"the same words in another order: {e.moved_blocks} "
                                        f"block{'s' if e.moved_blocks != 1 else ''} moved", *_provenance(e)))
    return None


def suggest(e: Evidence) -> Suggestion:
    """The rules: what a careful reviewer would most likely decide from the evidence alone."""
    if e.languages_differ and (e.exact or e.same_normalised or e.jaccard >= 0.9):
        return Suggestion(MERGE, 0.75, (f"the same text under two language tags ({e.languages[0]}, "
                                        f"{e.languages[1]}): check which tag is right",))
    if e.exact:
        return Suggestion(MERGE, 0.99, ("the same content bytes", *_provenance(e)))
    if e.partial:
        return _below_threshold(e)
    if (e.token_overlap or 0) >= SAME_TOKENS and (reordered := _reordered(e)) is not None:
        return reordered
    if e.signals and e.changed_share <= SMALL_CHANGE:
        revised = e.same_source and e.version_order in ("left-older", "right-older")
        return Suggestion(REVISION, 0.97 if revised else 0.9, (*_signal_reasons(e), *_provenance(e)))
    if e.same_normalised:
        return Suggestion(MERGE, 0.98, ("the same text once normalised (spacing, case, width, digits, letters)",
                                        *_provenance(e)))
    if (reordered := _reordered(e)) is not None:
        return reordered
    if e.changed_share <= 0.01 and e.moved_share > 0:
        return Suggestion(MERGE, 0.97, ("the same text, parts in another order", *_provenance(e)))
    if e.changed_share <= LIGHT_EDIT:
        return Suggestion(MERGE, 0.96, (f"{e.changed_share:.0%} of the words changed, no detail a revision "
                                        f"changes", *_provenance(e)))
    if (template := _template(e)) is not None:
        return template
    if (quotation := _marked_quotation(e)) is not None:
        return quotation
    # A quotation: much of one text is found in the other, while the rest was not revised but written anew.
    if e.containment >= 0.5 and (e.length_ratio < 0.7 or e.changed_share > SMALL_CHANGE):
        return Suggestion(QUOTE, 0.85, (f"{e.containment:.0%} of the shorter text is found in the longer one",
                                        f"Jaccard only {e.jaccard:.2f}"))
    if e.changed_share <= SMALL_CHANGE:
        return Suggestion(MERGE, 0.7, (f"{e.changed_share:.0%} of the words changed", *_provenance(e)))
    return Suggestion(KEEP, 0.6, (f"{e.changed_share:.0%} of the words changed: different texts",))


def _below_threshold(e: Evidence) -> Suggestion:
    """A pair below the review threshold, before its token diff: the two texts differ in more than a copy or
    a revision does, so what they share is a template, a quotation or a coincidence."""
    if (template := _template(e)) is not None:
        return template
    if (quotation := _marked_quotation(e)) is not None:
        return quotation
    if e.containment >= 0.5:
        return Suggestion(QUOTE, 0.85, (f"{e.containment:.0%} of the shorter text is found in the longer one",
                                        f"Jaccard only {e.jaccard:.2f}"))
    return Suggestion(KEEP, 0.6, (f"Jaccard {e.jaccard:.2f}, below the review threshold: different texts",))
