"""Where the text two documents share lies, and what is left of each without it (no Django imports).

From the tiles of the two token sequences (revision.tiles: runs of at least TILE tokens found in both, in
any order) this module tells: whether the shared text is nearly all of both (a copy or a revision), sits at
the edges of both (a header or footer: a template) or inside one text's middle (a quotation); whether it
reads as boilerplate by its vocabulary (licence, copyright, disclaimer, navigation, signature); whether it
is set in quotation marks; what share of each text is left once it is set aside, and how alike the two
remainders are (two unrelated remainders under a shared block: keep both). Also the token multisets: the
same tokens in another order is a move, whatever the size of the blocks.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

import numpy as np

from screening.engine import revision, tokdiff, tokscan

JOIN = 3  # tokens between two tiles that still make one block (a word or two edited inside a quotation)
EDGE = 0.05  # of a text's tokens (at least EDGE_TOKENS): a block this close to its start or end is at the edge
EDGE_TOKENS = 3
WHOLE = 0.9  # share of both texts inside shared blocks: the texts are one text
MAJOR = 0.75  # share of the shared tokens in blocks at the edges: a header or footer (a sentence or two the
# bodies happen to share elsewhere does not make it a quotation)
BOILERPLATE_TERMS = 3  # distinct boilerplate words a shared block needs to read as boilerplate
_QUOTES = frozenset(tokscan.QUOTE_MARKS)

# Words of licences, copyright notices, disclaimers, navigation and signatures, in the three languages (two
# ideographs a term in Chinese). Written from what such texts say, not from any corpus.
_TERMS = """
copyright copyrighted licence license licensed licensor licensee licenses warranty warranties merchantability
fitness infringement liability liable damages disclaimer disclaim disclaims disclaimed trademark trademarks
redistribution redistribute redistributions permission permitted hereby herein thereof provided conditions
terms notice notices reserved rights proprietary confidential unauthorized prohibited agreement
privacy cookies policy subscribe unsubscribe newsletter sitemap navigation menu login homepage footer
sincerely regards attribution noncommercial commons gpl mit apache bsd gnu software express implied
patent grant royalty sublicense terminate termination litigation lawsuit jurisdiction endorse acknowledge
affiliates notwithstanding hereunder statutory irrevocable perpetual indemnif distribute distribution
advertising limitation whatsoever contributor
حق حقوق محفوظ نشر بازنشر کپی‌رایت کپیرایت مجوز پروانه ضمانت تضمین مسئولیت مسئولیتی شرایط قوانین حریم خصوصی
سلب اطلاعیه توزیع اشتراک لغو ارادتمند احترام محرمانه مجاز غیرمجاز ممنوع اجازه استفاده منتشر
版权 许可 授权 担保 保证 免责 声明 条款 条件 隐私 保留 权利 所有 责任 商标 协议 订阅 退订 联系 首页 导航
此致 敬礼 机密 禁止 转载 复制 分发 修改 适销 用途 默示 明示 损害 赔偿 软件 发布
"""


@cache
def _vocabulary() -> tuple[tuple[str, ...], frozenset[str]]:
    """(words, normalised as the texts' tokens are; two-ideograph terms), for a prefix match: licensed,
    warranties, ضمانتی and پروانهٔ are found by licens-, warrant-, ضمانت and پروانه."""
    words, pairs = [], set()
    for term in _TERMS.split():
        toks = revision.Prepared(term).toks
        norms = [toks.norm(i) for i in range(len(toks))]
        if len(norms) == 1 and len(norms[0]) >= 3:
            words.append(norms[0])
        elif len(norms) == 2:
            pairs.add("".join(norms))
    return tuple(sorted(set(words))), frozenset(pairs)


@cache
def vocabulary_index() -> tuple[tuple, int, tuple]:
    """The vocabulary as tokdiff.boilerplate reads it: (an index of the words' hashes, the longest word, an
    index of the two-character terms' hashes)."""
    words, pairs = _vocabulary()
    pairs = sorted(p for p in pairs if len(p) == 2)  # previous + one character: no longer term can match
    return (tokdiff.index(tokdiff.hash_strings(list(words))[0]), max(map(len, words)),
            tokdiff.index(tokdiff.hash_strings(pairs)[0]) if pairs else tokdiff.index(np.zeros(0, np.uint64)))


def _pair_keys(h: np.ndarray) -> np.ndarray:
    return h[:-1] * np.uint64(0x9E3779B97F4A7C15) + h[1:] if h.shape[0] > 1 else np.zeros(0, dtype=np.uint64)


class Overlap(NamedTuple):  # a tuple: made for every stored pair, where a frozen dataclass costs microseconds
    token_overlap: float  # tokens the two share counted with repeats, of both texts' tokens (1.0: same words)
    moved_blocks: int  # shared blocks out of order
    where: str  # whole | edges | inside | none
    edges: tuple[str, str]  # where a header or footer sits in each text: top | bottom | top and bottom | ""
    blocks: list[list[int]]  # the shared blocks, [left start, left end, right start, right end] in characters
    shared_chars: int  # characters of the left text in shared blocks
    rest: tuple[float, float]  # share of each text's tokens outside the shared blocks
    rest_similarity: float | None  # Jaccard of the remainders' word pairs; None when a remainder is empty
    boilerplate: bool  # the shared text reads as a licence, notice, navigation or signature
    quoted: bool  # a shared block is set in quotation marks in one of the texts


def _blocks(tiled: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Tiles (in left order) joined into blocks: consecutive in both texts, at most JOIN tokens apart."""
    out: list[list[int]] = []
    for i, j, n in tiled.tolist():
        if out and 0 <= i - out[-1][1] <= JOIN and 0 <= j - out[-1][3] <= JOIN:
            out[-1][1], out[-1][3] = i + n, j + n
        else:
            out.append([i, i + n, j, j + n])
    return [tuple(b) for b in out]


def _edge(start: int, end: int, n: int) -> str:
    slack = max(EDGE_TOKENS, int(EDGE * n))
    return "top" if start <= slack else "bottom" if end >= n - slack else ""


def _edges(blocks: list[tuple[int, int, int, int]], nl: int, nr: int) -> tuple[bool, tuple[str, str]]:
    """Whether nearly all shared tokens lie in blocks at an edge of both texts, and which edges."""
    at_edges = total = 0
    sides: tuple[set, set] = (set(), set())
    for i1, i2, j1, j2 in blocks:
        size = i2 - i1
        total += size
        left, right = _edge(i1, i2, nl), _edge(j1, j2, nr)
        if left and right:
            at_edges += size
            sides[0].add(left)
            sides[1].add(right)
    names = tuple(" and ".join(sorted(s, key=("top", "bottom").index)) for s in sides)
    return total > 0 and at_edges >= MAJOR * total, names


def _rest_similarity(lh: np.ndarray, rh: np.ndarray, lfree: np.ndarray, rfree: np.ndarray) -> float | None:
    lkeys = np.unique(_pair_keys(lh)[lfree[:-1] & lfree[1:]]) if lh.shape[0] > 1 else np.zeros(0, np.uint64)
    rkeys = np.unique(_pair_keys(rh)[rfree[:-1] & rfree[1:]]) if rh.shape[0] > 1 else np.zeros(0, np.uint64)
    if not lkeys.shape[0] or not rkeys.shape[0]:
        return None
    shared = np.intersect1d(lkeys, rkeys, assume_unique=True).shape[0]
    return round(shared / (lkeys.shape[0] + rkeys.shape[0] - shared), 4)


def _boilerplate(lp: revision.Prepared, blocks: list[tuple[int, int, int, int]]) -> bool:
    """Whether the shared blocks hold BOILERPLATE_TERMS distinct boilerplate words (a word counts when it
    starts with one of them; ideographs two at a time)."""
    words, pairs = _vocabulary()
    hits: set[str] = set()
    toks = lp.toks
    for i1, i2, _, _ in blocks:
        previous = ""
        for i in range(i1, i2):
            norm = toks.norm(i)
            if len(norm) >= 3 and norm.startswith(words):
                hits.add(next(w for w in words if norm.startswith(w)))
            elif len(norm) == 1 and previous + norm in pairs:
                hits.add(previous + norm)
            previous = norm if len(norm) == 1 else ""
            if len(hits) >= BOILERPLATE_TERMS:
                return True
    return False


_SPACE = re.compile(r"\s*")


def _quoted(text: str, start: int, end: int, opened: int, closed: int) -> bool:
    """Whether quotation marks open before the span and close after it (spaces between allowed): the opening
    mark among the three characters before it or before its second token (`opened`), the closing one after its
    last token but one (`closed`) or among the three after it. A token the texts happen to share just outside
    the marks (`°C “…”`) then starts or ends the block, and it is still the quotation."""
    return not (_QUOTES.isdisjoint(text[max(0, start - 3):opened]) or _QUOTES.isdisjoint(text[closed:end + 3]))


def _inner(toks: revision.TokenList, i1: int, i2: int) -> tuple[int, int]:
    """Where a block's second token starts and its last but one ends (_quoted's `opened`, `closed`)."""
    start, end = int(toks.starts[i1]), int(toks.ends[i2 - 1])
    if i2 - i1 > 1:
        return int(toks.starts[i1 + 1]), int(toks.ends[i2 - 2])
    return start + 1, max(start, end - 1)


SIDES = {0: "", tokdiff.EDGE_TOP: "top", tokdiff.EDGE_BOTTOM: "bottom",
          tokdiff.EDGE_TOP | tokdiff.EDGE_BOTTOM: "top and bottom"}


def analyse(lp: revision.Prepared, rp: revision.Prepared, tiled: np.ndarray) -> Overlap:
    """Where the shared text of two prepared texts lies (tiled: revision.tiles of the two): analyse_reference,
    its arithmetic compiled (tokdiff.blocks, rest_pairs; in Python it was most of a pair's verification)."""
    lt, rt = lp.toks, rp.toks
    return _assembled(lp, rp, tiled, *tokdiff.located_blocks(
        lp.sorted_hashes(), rp.sorted_hashes(), lt.hashes, rt.hashes, tiled, lt.starts, lt.ends, rt.starts, rt.ends,
        JOIN, EDGE, EDGE_TOKENS, MAJOR, marks(lp), marks(rp)))


def analyse_tiled(lp: revision.Prepared, rp: revision.Prepared) -> tuple[Overlap, np.ndarray]:
    """analyse of the two texts and their tiles (revision.tiles), both in one compiled call."""
    lt, rt = lp.toks, rp.toks
    lkeys, _ = lp.grams()
    _, rindex = rp.grams()
    tiled, *found = tokdiff.tiled_blocks(
        lt.hashes, rt.hashes, lkeys, rindex, revision.TILE, revision.ANCHORS, lp.sorted_hashes(), rp.sorted_hashes(),
        lt.starts, lt.ends, rt.starts, rt.ends, JOIN, EDGE, EDGE_TOKENS, MAJOR, marks(lp), marks(rp))
    return _assembled(lp, rp, tiled, *found), tiled


def _assembled(lp: revision.Prepared, rp: revision.Prepared, tiled: np.ndarray, common: int, rows: np.ndarray,
               top: np.ndarray, chars: int, lfree: int, rfree: int, at_edges: bool, lsides: int, rsides: int,
               moved: int, lkeys: int, rkeys: int, shared: int, quoted: bool) -> Overlap:
    """The Overlap from what tokdiff.located_blocks worked out."""
    lt, rt = lp.toks, rp.toks
    nl, nr = len(lt), len(rt)
    total = (nl + nr) or 1
    overlap = 2 * common / total
    if tiled.shape[0] == 0:
        return Overlap(overlap, 0, "none", ("", ""), [], 0, (1.0, 1.0), None, False, False)
    rest = (round(lfree / nl, 4) if nl else 0.0, round(rfree / nr, 4) if nr else 0.0)
    where = "whole" if max(rest) <= 1 - WHOLE else "edges" if at_edges else "inside"
    judged = where != "whole"  # marks and remainders only matter for what is not the whole text
    similarity = round(shared / (lkeys + rkeys - shared), 4) if judged and lkeys and rkeys else None
    return Overlap(
        overlap, moved, where,
        (SIDES[lsides], SIDES[rsides]) if where == "edges" else ("", ""), top.tolist(), chars, rest, similarity,
        where == "edges" and tokdiff.boilerplate(lt.buf, lt.fs, lt.fe, rows, *vocabulary_index(),
                                                 BOILERPLATE_TERMS),  # _boilerplate, compiled
        judged and quoted,  # _quoted, compiled
    )


_QUOTE_RE = re.compile("[" + re.escape("".join(sorted(_QUOTES))) + "]")


def marks(p: revision.Prepared) -> np.ndarray:
    """The positions of the quotation marks in a prepared text, found once for all its pairs (by the regular
    expression, unless revision.prepare_many found them with its tokens)."""
    if p.quotes is None:
        p.quotes = np.fromiter((m.start() for m in _QUOTE_RE.finditer(p.text)), np.int64)
    return p.quotes


def analyse_reference(lp: revision.Prepared, rp: revision.Prepared, tiled: np.ndarray) -> Overlap:
    """Where the shared text of two prepared texts lies, in numpy and Python (tests hold analyse to it)."""
    lt, rt = lp.toks, rp.toks
    nl, nr = len(lt), len(rt)
    total = (nl + nr) or 1
    overlap = 2 * tokdiff.multiset_shared(lt.hashes, rt.hashes) / total  # not rounded: 1.0 means every token
    if tiled.shape[0] == 0:
        return Overlap(overlap, 0, "none", ("", ""), [], 0, (1.0, 1.0), None, False, False)
    lcov, rcov = revision.covered_reference(tiled, nl, 0), revision.covered_reference(tiled, nr, 1)
    lfree, rfree = np.diff(lcov) == 0, np.diff(rcov) == 0
    rest = (round(float(lfree.mean()), 4) if nl else 0.0, round(float(rfree.mean()), 4) if nr else 0.0)
    blocks = _blocks(tiled)
    at_edges, edges = _edges(blocks, nl, nr)
    where = "whole" if max(rest) <= 1 - WHOLE else "edges" if at_edges else "inside"
    spans = [[int(lt.starts[i1]), int(lt.ends[i2 - 1]), int(rt.starts[j1]), int(rt.ends[j2 - 1])]
             for i1, i2, j1, j2 in blocks]
    judged = where != "whole"  # marks and remainders only matter for what is not the whole text
    return Overlap(
        overlap, int(tokdiff.out_of_order(tiled)), where, edges if where == "edges" else ("", ""),
        sorted(spans, key=lambda s: s[0] - s[1])[:5], sum(s[1] - s[0] for s in spans), rest,
        _rest_similarity(lt.hashes, rt.hashes, lfree, rfree) if judged else None,
        where == "edges" and _boilerplate(lp, blocks),  # the words matter only for a header or footer
        judged and any(_quoted(lp.text, s[0], s[1], *_inner(lt, i1, i2))
                       or _quoted(rp.text, s[2], s[3], *_inner(rt, j1, j2))
                       for s, (i1, i2, j1, j2) in zip(spans, blocks, strict=True)),
    )


def describe(where: str, edges: tuple[str, str], blocks: list[list[int]], shared_chars: int,
             rest_similarity: float | None) -> str:
    """`shared: a 612-character block at the end of both; the rest shares 3% of word pairs`."""
    if where == "none" or not blocks:
        return "nothing of five words or more"
    if where == "whole":
        return f"nearly all of both texts ({len(blocks)} block{'s' if len(blocks) != 1 else ''})"
    size = f"{shared_chars:,} characters in {len(blocks)} block{'s' if len(blocks) != 1 else ''}"
    place = {"top": "at the top", "bottom": "at the bottom", "top and bottom": "at the top and the bottom"}
    if where == "edges":
        left, right = (place.get(e, e) for e in edges)
        spot = f"{left} of both" if left == right else f"{left} of the left, {right} of the right"
    else:
        spot = "inside one text's middle"
    rest = "" if rest_similarity is None else f"; the rest shares {rest_similarity:.0%} of word pairs"
    return f"{size} {spot}{rest}"
