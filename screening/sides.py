"""Where the pair page draws each of a pair's two documents, and so the key and the word that pick one as the
retained version.

In the data a pair's documents are `left` and `right` (CandidatePair.left and .right, the review sheets'
left_doc_id and right_doc_id, the stored retained version): names of the pair's first and second document,
never of a side of anyone's screen. The page draws the first at the start of the reading direction, so in a
right-to-left language the panes mirror with the whole layout (as the differences table and the arrows do):
in Persian the pair's `left` document is the pane on the right of the screen. The keys and words name what
the editor sees (l and "left" pick the pane on the left of the screen, in every language); the value stored
is the document drawn there.
"""

from __future__ import annotations

from typing import NamedTuple

from django.utils.translation import get_language_bidi, pgettext_lazy

WORDS = {"left": pgettext_lazy("the side of the screen a document is shown on", "left"),
         "right": pgettext_lazy("the side of the screen a document is shown on", "right"),
         "both": pgettext_lazy("retain both documents", "both")}
KEYS = {"left": "l", "right": "r", "both": "b"}


class Side(NamedTuple):
    document: str  # the stored value: "left" or "right" (the pair's document), or "both"
    key: str  # the shortcut, named after the side of the screen the document is drawn on
    word: object  # that side's word, translated when shown


def drawn_on(document: str, rtl: bool) -> str:
    """The side of the screen the pair's `document` ("left", "right" or "both") is drawn on."""
    if not rtl or document == "both":
        return document
    return "right" if document == "left" else "left"


def side(document: str, rtl: bool | None = None) -> Side:
    """How the retained-version choice for `document` is shown in the current language (or `rtl`)."""
    screen = drawn_on(document, get_language_bidi() if rtl is None else rtl)
    return Side(document, KEYS[screen], WORDS[screen])


def sides(rtl: bool | None = None) -> dict[str, Side]:
    rtl = get_language_bidi() if rtl is None else rtl
    return {document: side(document, rtl) for document in ("left", "right", "both")}


def retained_names(pair) -> dict[str, str]:
    """A stored retained version as a reader should read it: the document's id (never "left" or "right", which
    a reader of a mirrored page would take for a side of the screen), or "both"."""
    return {"left": pair.left.doc_id, "right": pair.right.doc_id, "both": str(WORDS["both"])}
