"""The evidence about one pair, beside its scores (no Django imports): how much of each text is found in the
other, whether they read the same once normalised, how much of them changed or only moved, the revision
signals, and what their metadata says (language tags, source, version and collection order, length).
Computed when a run verifies its candidates, shown on the pair page, exported, and read by `suggest`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from screening.engine import fast, foldtable, overlap, revision, tokdiff

_VERSION_PART = re.compile(r"\d+|[^\d.\-_ ]+")


@dataclass(frozen=True)
class DocFacts:
    """What evidence needs of one document besides its text."""

    language: str
    source_id: str
    version: str
    collected_at: str


@dataclass
class Evidence:
    jaccard: float
    containment_left: float  # share of the left text's shingles found in the right
    containment_right: float
    same_normalised: bool  # the two texts read the same once normalised
    changed_share: float  # share of both texts' tokens in changed stretches (moved ones excluded)
    moved_share: float
    length_ratio: float  # shorter text / longer text, in characters
    languages: tuple[str, str]
    same_source: bool
    version_order: str  # left-older | right-older | same | "" (unknown)
    collected_order: str  # left-older | right-older | same | ""
    template_share: float | None = None
    jaccard_without_template: float | None = None
    exact: bool = False  # the same content bytes (doc-content-v1)
    signals: list[list[str]] = field(default_factory=list)  # [[kind, before, after], ...]
    # Below the review threshold a run keeps what the shingle sets tell and leaves the token diff (signals,
    # changed and moved shares, "the same once normalised") to the pair's first opening: `partial`.
    partial: bool = False
    # Where the shared text lies (overlap.analyse); None/empty for pairs of runs made before it was kept.
    token_overlap: float | None = None  # the same tokens counted with repeats, of both texts' (1.0: same words)
    moved_blocks: int = 0  # shared blocks out of order
    shared_where: str = ""  # whole | edges | inside | none
    shared_edges: list[str] = field(default_factory=lambda: ["", ""])  # top | bottom | top and bottom, a text
    shared_blocks: list[list[int]] = field(default_factory=list)  # [left start, end, right start, end] chars
    shared_chars: int = 0
    rest_left: float | None = None  # share of the left text's tokens outside the shared blocks
    rest_right: float | None = None
    rest_similarity: float | None = None  # how alike the two remainders are (Jaccard of word pairs)
    boilerplate: bool = False  # the shared text reads as a licence, notice, navigation or signature
    quoted: bool = False  # a shared block stands in quotation marks

    @property
    def languages_differ(self) -> bool:
        return self.languages[0] != self.languages[1]

    @property
    def containment(self) -> float:
        """Of the shorter text, the share found in the other: high for a quotation, whatever its Jaccard."""
        return max(self.containment_left, self.containment_right)

    def as_dict(self) -> dict:
        # The instance's own dict, in field order (the generated __init__ sets them so): dataclasses.asdict
        # deep-copies every value, and a getattr a field cost more than the copy.
        data = dict(self.__dict__)
        data["languages"] = list(self.languages)
        data["signals"] = [list(s) for s in self.signals]
        data["shared_edges"] = list(self.shared_edges)
        data["shared_blocks"] = [list(b) for b in self.shared_blocks]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Evidence:
        return cls(**{"partial": False, **data, "languages": tuple(data["languages"])})


@lru_cache(maxsize=4096)  # a document's version is read again for each of its pairs
def _version_key(version: str) -> tuple:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in _VERSION_PART.findall(version.lower()))


def order(left: str, right: str, key=lambda v: v) -> str:
    """Which of two values comes first (versions by their numbers, dates as ISO text), "" when unknown."""
    if not left or not right:
        return ""
    a, b = key(left), key(right)
    return "same" if a == b else "left-older" if a < b else "right-older"


def metadata(left: DocFacts, right: DocFacts) -> dict:
    return {"languages": (left.language, right.language), "same_source": left.source_id == right.source_id,
            "version_order": order(left.version, right.version, _version_key),
            "collected_order": order(left.collected_at[:19], right.collected_at[:19])}


def for_exact(left: DocFacts, right: DocFacts) -> Evidence:
    """Two documents with the same content bytes."""
    return Evidence(1.0, 1.0, 1.0, True, 0.0, 0.0, 1.0, exact=True, **metadata(left, right))


def located(lp: revision.Prepared, rp: revision.Prepared) -> tuple[dict, np.ndarray]:
    """The Evidence fields that say where the shared text lies (overlap.analyse), and the texts' tiles."""
    o, tiled = overlap.analyse_tiled(lp, rp)
    return {"token_overlap": o.token_overlap, "moved_blocks": o.moved_blocks, "shared_where": o.where,
            "shared_edges": list(o.edges), "shared_blocks": o.blocks, "shared_chars": o.shared_chars,
            "rest_left": o.rest[0], "rest_right": o.rest[1], "rest_similarity": o.rest_similarity,
            "boilerplate": o.boilerplate, "quoted": o.quoted}, tiled


def for_near(left_text: str | revision.Prepared, right_text: str | revision.Prepared, left_hashes: np.ndarray,
             right_hashes: np.ndarray, left: DocFacts, right: DocFacts, jaccard: float,
             template: tuple[float | None, float | None] = (None, None), shared: int | None = None) -> Evidence:
    """The evidence of a verified near pair, from both texts (raw, or prepared once for many pairs) and their
    shingle-hash sets (`shared`: their intersection's size, when the caller counted it). "The same once
    normalised" is a token diff with no change at all; two texts of the same tokens in another order carry no
    revision signal (a signal there is two moved stretches the alignment set side by side)."""
    lp, rp = revision.prepare(left_text), revision.prepare(right_text)
    shared = fast.intersection_size(left_hashes, right_hashes) if shared is None else shared
    where, tiled = located(lp, rp)
    comparison = revision.compare(lp, rp, tiled)
    if where["token_overlap"] == 1.0:
        comparison = revision.Comparison([], comparison.changed_share, comparison.moved_share)
    longer = max(len(lp.text), len(rp.text)) or 1
    return Evidence(
        jaccard, shared / max(left_hashes.size, 1), shared / max(right_hashes.size, 1),
        comparison.changed_share == comparison.moved_share == 0, round(comparison.changed_share, 4),
        round(comparison.moved_share, 4), round(min(len(lp.text), len(rp.text)) / longer, 4),
        template_share=template[0], jaccard_without_template=template[1],
        signals=[[s.kind, s.left, s.right] for s in comparison.signals], **metadata(left, right), **where,
    )


def for_near_partial(left_text: str | revision.Prepared, right_text: str | revision.Prepared,
                     left_hashes: np.ndarray, right_hashes: np.ndarray, left: DocFacts, right: DocFacts,
                     jaccard: float, template: tuple[float | None, float | None] = (None, None),
                     shared: int | None = None) -> Evidence:
    """The evidence of a pair below the review threshold without the token diff (`partial`): what the shingle
    sets, the shared blocks and the metadata say. The diff's fields are 0 until the pair is first opened
    (evidence_complete)."""
    lp, rp = revision.prepare(left_text), revision.prepare(right_text)
    shared = fast.intersection_size(left_hashes, right_hashes) if shared is None else shared
    longer = max(len(lp.text), len(rp.text)) or 1
    return Evidence(
        jaccard, shared / max(left_hashes.size, 1), shared / max(right_hashes.size, 1), False, 0.0, 0.0,
        round(min(len(lp.text), len(rp.text)) / longer, 4), template_share=template[0],
        jaccard_without_template=template[1], partial=True, **metadata(left, right),
        **located(lp, rp)[0],
    )


class NearItem(NamedTuple):
    """One stored pair of a window (for_near_many): for_near's arguments, and whether its evidence is whole
    (for_near, the token diff included) or partial (for_near_partial)."""

    left: revision.Prepared
    right: revision.Prepared
    left_hashes: np.ndarray
    right_hashes: np.ndarray
    left_facts: DocFacts
    right_facts: DocFacts
    jaccard: float
    template: tuple[float | None, float | None]
    shared: int
    whole: bool


class Scratch:
    """The arrays a verification job's windows lay their documents out in, kept from one window to the next:
    nine arrays of a window's size made afresh each window cost more in fresh pages than filling them."""

    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}

    def take(self, name: str, dtype, n: int) -> np.ndarray:
        """An array of n items for this name (its contents whatever they were)."""
        kept = self.arrays.get(name)
        if kept is None or kept.shape[0] < n:
            kept = self.arrays[name] = np.empty(max(n, 2 * (0 if kept is None else kept.shape[0])), dtype=dtype)
        return kept[:n]

    def kept(self, names: tuple[str, ...], dtypes: tuple) -> list[np.ndarray]:
        """The arrays kept under these names whole (empty ones at first), for a kernel that grows them."""
        return [self.arrays.get(name, np.zeros(0, dtype=dtype)) for name, dtype in zip(names, dtypes, strict=True)]

    def laid(self, name: str, arrays: list[np.ndarray], n: int) -> np.ndarray:
        """The arrays one after another (n items in all)."""
        return np.concatenate(arrays, out=self.take(name, arrays[0].dtype, n))


def _window(items: list[NearItem], scratch: Scratch) -> tuple[list[list[int]], list[list[int]], list[list[int]]]:
    """tokdiff.pairs_evidence of the items: on the arrays of the batch their documents were all tokenised in
    (revision.prepare_many), else on their arrays laid one after another."""
    at: dict[revision.Prepared, int] = {}  # (a Prepared hashes by identity) its place among the window's texts
    rows = [(at.setdefault(item.left, len(at)), at.setdefault(item.right, len(at)), item.whole) for item in items]
    preps = list(at)
    batch = preps[0].laid[0] if preps[0].laid else None
    if batch is not None and all(p.laid is not None and p.laid[0] is batch for p in preps):
        arrays, docs = _as_laid(preps, batch)
    else:
        arrays, docs = _laid_out(preps, scratch)
    head, tops, signals, *kept = tokdiff.pairs_evidence(
        *arrays, docs, np.array(rows, dtype=np.int64), revision.TILE, revision.ANCHORS, overlap.JOIN, overlap.EDGE,
        overlap.EDGE_TOKENS, overlap.MAJOR, revision.SMALL, revision.MOVED_SHARE, *overlap.vocabulary_index(),
        overlap.BOILERPLATE_TERMS, revision.spaces(), *scratch.kept(("keys", "after", "slots", "heads"),
                                                                   (np.uint64, np.int64, np.uint64, np.int64)))
    scratch.arrays.update(zip(("keys", "after", "slots", "heads"), kept, strict=True))
    return head.tolist(), tops.tolist(), signals.tolist()


def _as_laid(preps: list[revision.Prepared], batch: tokdiff.Batch) -> tuple[tuple, np.ndarray]:
    """pairs_evidence's arrays and document rows for documents all of one batch (revision.prepare_many): the
    batch's own arrays, nothing copied."""
    t = np.fromiter((p.laid[1] for p in preps), dtype=np.int64, count=len(preps))
    found = batch.table[t]  # rows: tokens, first token, buf start, buf end, first mark, end of marks
    rows = np.empty((len(preps), 6), dtype=np.int64)
    # A text of more than MAX_TOKENS tokens is compared on its first MAX_TOKENS (revision.Prepared).
    rows[:, 0], rows[:, 1] = found[:, 1], found[:, 1] + np.minimum(found[:, 0], revision.MAX_TOKENS)
    rows[:, 2], rows[:, 3], rows[:, 4], rows[:, 5] = found[:, 2], batch.offsets[t], found[:, 4], found[:, 5]
    return (batch.hashes, batch.flags, batch.starts, batch.ends, batch.buf, batch.fs, batch.fe, batch.cp,
            batch.marks), rows


def _laid_out(preps: list[revision.Prepared], scratch: Scratch) -> tuple[tuple, np.ndarray]:
    """pairs_evidence's arrays and document rows, the documents' arrays laid one after another."""
    toks = [p.toks for p in preps]
    docs = np.zeros((len(preps), 6), dtype=np.int64)
    ends = np.cumsum(np.fromiter((len(t) for t in toks), dtype=np.int64, count=len(toks)))
    docs[:, 1], docs[1:, 0] = ends, ends[:-1]
    bufs = np.cumsum(np.fromiter((t.buf.shape[0] for t in toks), dtype=np.int64, count=len(toks)))
    docs[1:, 2] = bufs[:-1]
    docs[1:, 3] = np.cumsum(np.fromiter((len(p.text) for p in preps), dtype=np.int64, count=len(preps)))[:-1]
    marks = [overlap.marks(p) for p in preps]
    mark_ends = np.cumsum(np.fromiter((m.shape[0] for m in marks), dtype=np.int64, count=len(marks)))
    docs[:, 5], docs[1:, 4] = mark_ends, mark_ends[:-1]
    n, laid = int(ends[-1]), scratch.laid
    return (laid("hashes", [t.hashes for t in toks], n), laid("flags", [t.flags for t in toks], n),
            laid("starts", [t.starts for t in toks], n), laid("ends", [t.ends for t in toks], n),
            laid("buf", [t.buf for t in toks], int(bufs[-1])),
            laid("fs", [t.fs for t in toks], n), laid("fe", [t.fe for t in toks], n),
            foldtable.codepoints("".join(p.text for p in preps)), laid("marks", marks, int(mark_ends[-1]))), docs


def for_near_many(items: list[NearItem], scratch: Scratch | None = None) -> list[dict]:
    """for_near(...).as_dict() of each whole item, for_near_partial(...).as_dict() of the others, a window of
    pairs in one compiled call (tokdiff.pairs_evidence: where the shared text lies, the diff in brief) and the
    dicts built here, without an Evidence a pair; tests hold them to for_near and for_near_partial. A job's
    windows share one `scratch`."""
    if not items:
        return []
    heads, tops, rows = _window(items, scratch or Scratch())
    out = []
    whole_share, sides, signal = 1 - overlap.WHOLE, overlap.SIDES, revision.signal
    versions: dict[tuple[str, str], str] = {}  # a document's pairs ask the same again
    for item, h in zip(items, heads, strict=True):
        (common, tiled, chars, lfree, rfree, edged, lsides, rsides, moved_blocks, lkeys, rkeys, both, quoted,
         boilerplate, ntop, top_at, diffed, changed, shifted, nsignals, at) = h
        lp, rp, lf, rf, whole = item.left, item.right, item.left_facts, item.right_facts, item.whole
        nl, nr = len(lp.toks), len(rp.toks)  # (a laid text's length without making its arrays' views)
        total = (nl + nr) or 1
        signals = []
        if not whole:
            same, changed_share, moved_share = False, 0.0, 0.0
        elif diffed:
            changed_share, moved_share = changed / total, shifted / total
            same = changed_share == moved_share == 0
            for i1, i2, j1, j2, examine in rows[at:at + nsignals] if 2 * common != total else ():
                found = signal(lp, rp, i1, i2, j1, j2, examine)
                if found is not None:
                    signals.append([found.kind, found.left, found.right])
        else:
            same, changed_share, moved_share = True, 0.0, 0.0
        shared = item.shared
        ll, rl = len(lp.text), len(rp.text)
        if (key := (lf.version, rf.version)) not in versions:
            versions[key] = order(lf.version, rf.version, _version_key)
        if tiled:
            rest_left, rest_right = round(lfree / nl, 4) if lfree else 0.0, round(rfree / nr, 4) if rfree else 0.0
            where = "whole" if max(rest_left, rest_right) <= whole_share else "edges" if edged else "inside"
            judged, edges = where != "whole", where == "edges"
            shared_edges = [sides[lsides], sides[rsides]] if edges else ["", ""]
            shared_blocks = tops[top_at:top_at + ntop]
            rest_similarity = round(both / (lkeys + rkeys - both), 4) if judged and lkeys and rkeys else None
            boilerplate, quoted = edges and bool(boilerplate), judged and bool(quoted)
        else:
            moved_blocks, where, shared_edges, shared_blocks, chars, rest_left = 0, "none", ["", ""], [], 0, 1.0
            rest_right, rest_similarity, boilerplate, quoted = 1.0, None, False, False
        # One literal, in Evidence's field order (as_dict's): an update with keywords cost more than the rest.
        out.append({
            "jaccard": item.jaccard, "containment_left": shared / max(item.left_hashes.size, 1),
            "containment_right": shared / max(item.right_hashes.size, 1), "same_normalised": same,
            "changed_share": round(changed_share, 4) if changed_share else 0.0,
            "moved_share": round(moved_share, 4) if moved_share else 0.0,
            "length_ratio": round(min(ll, rl) / (max(ll, rl) or 1), 4), "languages": [lf.language, rf.language],
            "same_source": lf.source_id == rf.source_id, "version_order": versions[key],
            "collected_order": order(lf.collected_at[:19], rf.collected_at[:19]), "template_share": item.template[0],
            "jaccard_without_template": item.template[1], "exact": False, "signals": signals,
            "partial": not whole, "token_overlap": 2 * common / total, "moved_blocks": moved_blocks,
            "shared_where": where, "shared_edges": shared_edges, "shared_blocks": shared_blocks,
            "shared_chars": chars, "rest_left": rest_left, "rest_right": rest_right,
            "rest_similarity": rest_similarity, "boilerplate": boilerplate, "quoted": quoted,
        })
    return out


def warm() -> None:
    """Load the kernels of a pair's evidence once (from numba's cache, else compile): the token diff's
    (revision.warm) and those of where the shared text lies, a header and footer of boilerplate included."""
    revision.warm()
    frame = "Copyright the authors, all rights reserved; provided without warranty or liability of any kind."
    lp = revision.Prepared(f"{frame}\n\nwarm up the kernels on one text of its own here\n\n{frame}")
    rp = revision.Prepared(f"{frame}\n\nand on another text that shares none of it at all\n\n{frame}")
    located(lp, rp)
    overlap.analyse(lp, rp, revision.tiles(lp, rp))
    hashes, facts = np.zeros(0, dtype=np.uint64), DocFacts("en", "", "", "")
    for_near_many([NearItem(lp, rp, hashes, hashes, facts, facts, 0.5, (None, None), 0, whole)
                   for whole in (True, False)])
