"""Retrieval metrics with graded relevance by URL prefix.

A golden question names the pages (or page sections, ``…/faq#q12``) whose retrieval counts as
relevant (``expected_urls``). A retrieved url earns a grade against them (:func:`url_grade`,
the maximum over expected urls); urls are compared after :func:`url_normalise`:

- **1.0** (:data:`EXACT_GRADE`) — the expected item itself or a page containing it: the same
  url including the fragment; any section of an expected whole page (``…/page#causes`` is part
  of ``…/page``); or the whole page (no fragment) of an expected section.
- **0.5** (:data:`PARTIAL_GRADE`) — a sub-page: same scheme and host, and the path continues the
  expected path after a ``/`` (``https://a.org/x/y`` under ``https://a.org/x``; the sibling
  ``https://a.org/xy`` is *not* under it). Every path is under the root ``/``. An expected url
  with a query string identifies one dynamic page and has no sub-pages.
- **0.25** (:data:`SECTION_GRADE`) — another section of an expected section's page
  (``…/faq#q7`` when ``…/faq#q12`` was expected: the right page, the wrong answer; one FAQ
  page holds many questions, e.g. the RIVM FAQ).
- **0.0** — anything else (another host, another scheme, the same path with another query).

NDCG@k uses the grades as gains. MRR, P@k and R@k use binary relevance: relevant ⇔ grade ≥
:data:`RELEVANT_GRADE` (0.5), so a sibling section is not a hit. Metrics work on distinct
items: a ranked list is deduplicated (first occurrence kept) before scoring — by page when no
expected url names a section, by page and section otherwise — so an item retrieved twice is
neither counted twice nor pushes later items down. Every metric returns ``None`` when the
question has no expected urls (undefined, not zero), and raises ``ValueError`` for ``k < 1``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from urllib.parse import SplitResult, urlsplit, urlunsplit

import ir_measures
import numpy as np
from scipy.optimize import linear_sum_assignment

EXACT_GRADE = 1.0
PARTIAL_GRADE = 0.5
SECTION_GRADE = 0.25
RELEVANT_GRADE = PARTIAL_GRADE

_DEFAULT_PORTS = {"http": 80, "https": 443}


def url_normalise(url: str) -> str:
    """Normalise ``url`` for comparison (RFC 3986 §6.2.2–6.2.3, the safe subset).

    Surrounding whitespace stripped; scheme and host lower-cased (user info and path keep their
    case: paths are case-sensitive); the scheme's default port dropped (``:80`` for http,
    ``:443`` for https); an empty path with a host becomes ``/``; one trailing ``/`` of a
    non-root path dropped (``/x/`` → ``/x``); an empty query (``?`` alone) and an empty
    fragment (``#`` alone) dropped. ``www.`` is kept: ``www.a.org`` and ``a.org`` may serve
    different sites. A non-empty fragment is kept; :func:`url_grade` ignores it.

    ``"HTTPS://WWW.A.org:443/X/?#"`` → ``"https://www.a.org/X"``. Idempotent. Never raises: a
    string that is not a URL (no scheme, an invalid port) is returned with only the rules that
    apply to it.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    netloc = _netloc_normalise(parts, scheme=scheme)
    path = parts.path
    if netloc and not path:
        path = "/"
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return urlunsplit((scheme, netloc, path, parts.query, parts.fragment))


def _netloc_normalise(parts: SplitResult, *, scheme: str) -> str:
    if not parts.netloc:
        return ""
    try:
        port = parts.port
    except ValueError:  # a port that is not a number in 0–65535: keep it as written
        return parts.netloc.lower()
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal: urlsplit removed the brackets
        host = f"[{host}]"
    userinfo, _, _ = parts.netloc.rpartition("@")
    netloc = f"{userinfo}@{host}" if userinfo else host
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        netloc = f"{netloc}:{port}"
    return netloc


def _item(url: str, *, keep_fragment: bool) -> SplitResult:
    """The normalised url, without its fragment unless ``keep_fragment``."""
    parts = urlsplit(url_normalise(url))
    return parts if keep_fragment else parts._replace(fragment="")


def _page(item: SplitResult) -> SplitResult:
    return item._replace(fragment="")


def _is_sub_page(page: SplitResult, parent: SplitResult) -> bool:
    page, parent = _page(page), _page(parent)
    if not parent.netloc or parent.query:
        return False
    if (page.scheme, page.netloc) != (parent.scheme, parent.netloc):
        return False
    prefix = parent.path if parent.path.endswith("/") else parent.path + "/"
    return page.path.startswith(prefix) and page.path != parent.path


def _covers(item: SplitResult, expected: SplitResult) -> bool:
    """``item`` is the expected item itself or contains it (grade 1.0): the same url, a section
    of an expected whole page, or the whole page of an expected section."""
    if item == expected:
        return True
    return _page(item) == _page(expected) and (not expected.fragment or not item.fragment)


def _grade(item: SplitResult, expected_items: Sequence[SplitResult]) -> float:
    grade = 0.0
    for expected in expected_items:
        if _covers(item, expected):
            return EXACT_GRADE
        if _is_sub_page(item, expected):
            grade = max(grade, PARTIAL_GRADE)
        elif expected.fragment and _page(item) == _page(expected):
            grade = max(grade, SECTION_GRADE)
    return grade


def _distinct(urls: Sequence[str], *, keep_fragment: bool) -> list[SplitResult]:
    """Distinct items of ``urls`` in their given order (first occurrence kept); blanks skipped."""
    items: dict[str, SplitResult] = {}
    for url in urls:
        if url and url.strip():
            item = _item(url, keep_fragment=keep_fragment)
            items.setdefault(urlunsplit(item), item)
    return list(items.values())


def _judged(ranked: Sequence[str], expected: Sequence[str]) -> tuple[list[SplitResult], list[SplitResult]]:
    """``(ranked items, expected items)``: sections are told apart only when one is expected."""
    expected_items = _distinct(expected, keep_fragment=True)
    sections = any(e.fragment for e in expected_items)
    return _distinct(ranked, keep_fragment=sections), expected_items


def url_grade(url: str, expected: Sequence[str]) -> float:
    """Grade of ``url`` against the expected urls: :data:`EXACT_GRADE`, :data:`PARTIAL_GRADE`,
    :data:`SECTION_GRADE` or 0.0 (module docstring); the maximum over ``expected``. 0.0 when
    ``expected`` is empty or ``url`` blank."""
    if not url or not url.strip():
        return 0.0
    return _grade(_item(url, keep_fragment=True), _distinct(expected, keep_fragment=True))


def ranked_urls(chunk_scores: Sequence[dict]) -> list[str]:
    """Distinct urls in rank order from ``Answer.chunk_scores``.

    ``chunk_scores``: rows with ``"url"`` (str or ``None``) and ``"rank"`` (int, 1 = best); rows
    are ordered by ``rank`` (a row without an int rank keeps its place after the ranked rows).
    Rows with a missing, ``None`` or blank url are skipped. Urls are returned normalised
    (:func:`url_normalise`), fragments kept, once each: several chunks of one document give one
    entry, at its best chunk's rank.
    """

    def rank_of(row: dict) -> float:
        rank = row.get("rank")
        return rank if isinstance(rank, int) and not isinstance(rank, bool) else math.inf

    urls = [row.get("url") for row in sorted(chunk_scores, key=rank_of)]
    return [urlunsplit(item) for item in _distinct([u for u in urls if isinstance(u, str)], keep_fragment=True)]


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")


def _discount(position: int) -> float:
    """1 / log2(position + 1) for a 1-based position."""
    return 1.0 / math.log2(position + 1)


def ndcg_at_k(ranked: Sequence[str], expected: Sequence[str], *, k: int = 5) -> float | None:
    """Normalised discounted cumulative gain of the first ``k`` distinct items, in [0, 1].

    Each expected url is one relevant item and earns its gain once: at the retrieved position
    (within the first ``k``) where grade / log2(position + 1) is highest, positions and expected
    urls paired by an optimal assignment (``scipy.optimize.linear_sum_assignment``, maximising the
    summed discounted gain; each position and each expected url used once, so a page covering two
    expected sections counts for one). A greedy pairing scored [P, P#a] for expected {P#a, P#b}
    at 0.71 instead of 1.0. DCG@k is the sum of those discounted gains; IDCG@k = Σ_{i=1..min(k, |E|)}
    1 / log2(i + 1), every expected url at grade 1.0 in the first positions (Järvelin &
    Kekäläinen 2002, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4), with
    the log2(i + 1) discount of Burges et al. 2005 applied from position 1). The ideal depends
    on the expected urls only, so runs are scored on one scale, and DCG ≤ IDCG.

    ``None`` when ``expected`` has no non-blank url. Raises ``ValueError`` for ``k < 1``.
    """
    _check_k(k)
    items, expected_items = _judged(ranked, expected)
    if not expected_items:
        return None
    top = items[:k]
    gains = np.array(
        [[_grade(item, [e]) * _discount(p) for e in expected_items] for p, item in enumerate(top, start=1)]
    )
    dcg = 0.0
    if gains.size:
        rows, columns = linear_sum_assignment(gains, maximize=True)
        dcg = float(gains[rows, columns].sum())
    idcg = sum(_discount(i) for i in range(1, min(k, len(expected_items)) + 1))
    return dcg / idcg


def mrr(ranked: Sequence[str], expected: Sequence[str]) -> float | None:
    """Reciprocal rank of the first relevant item (grade ≥ :data:`RELEVANT_GRADE`), in [0, 1].

    Over the whole distinct list given (no cut-off); 0.0 when no item is relevant. The mean over
    questions is the MRR of Voorhees (1999, TREC-8 QA track report). ``None`` when ``expected``
    has no non-blank url.
    """
    items, expected_items = _judged(ranked, expected)
    if not expected_items:
        return None
    for position, item in enumerate(items, start=1):
        if _grade(item, expected_items) >= RELEVANT_GRADE:
            return 1.0 / position
    return 0.0


def precision_at_k(ranked: Sequence[str], expected: Sequence[str], *, k: int = 5) -> float | None:
    """Share of the first ``k`` distinct items that are relevant (grade ≥ 0.5), in [0, 1].

    The denominator is ``k`` even when fewer items were retrieved (Manning, Raghavan & Schütze
    2008, §8.4). ``None`` when ``expected`` has no non-blank url; ``ValueError`` for ``k < 1``.
    """
    _check_k(k)
    items, expected_items = _judged(ranked, expected)
    if not expected_items:
        return None
    relevant = sum(1 for item in items[:k] if _grade(item, expected_items) >= RELEVANT_GRADE)
    return relevant / k


def recall_at_k(ranked: Sequence[str], expected: Sequence[str], *, k: int = 5) -> float | None:
    """Share of the distinct expected urls covered by the first ``k`` distinct items, in [0, 1].

    An expected url is covered by a retrieved item that is it (grade 1.0) or a sub-page of it;
    a sibling section of an expected section does not cover it. ``None`` when ``expected`` has
    no non-blank url; ``ValueError`` for ``k < 1``.
    """
    _check_k(k)
    items, expected_items = _judged(ranked, expected)
    if not expected_items:
        return None
    top = items[:k]
    covered = sum(1 for e in expected_items if any(_covers(i, e) or _is_sub_page(i, e) for i in top))
    return covered / len(expected_items)


# Integer grades of the TREC qrels built from the URL-prefix relevance: exact 4, sub-page 2,
# sibling section 1 (the 1.0 / 0.5 / 0.25 grades × 4).
TREC_GRADE_SCALE = 4


def ndcg_trec_at_k(ranked: Sequence[str], expected: Sequence[str], *, k: int = 5) -> float | None:
    """trec_eval's nDCG@k (``ir_measures``, pytrec_eval backend), in [0, 1], for comparison with
    published figures.

    Qrels: every expected url at grade 4, and every retrieved url with a positive URL-prefix
    grade at that grade × :data:`TREC_GRADE_SCALE` (sub-page 2, sibling section 1); the run is
    the distinct retrieved list with descending scores. Unlike :func:`ndcg_at_k`, each relevant
    url counts on its own (two sub-pages of one expected page both earn gain, and the ideal
    grows with them), gains are the integer grades and the discount is 1/log2(rank + 1)
    (Järvelin & Kekäläinen 2002 as implemented by trec_eval). ``None`` when ``expected`` has no
    non-blank url. Raises ``ValueError`` for ``k < 1``.
    """
    _check_k(k)
    items, expected_items = _judged(ranked, expected)
    if not expected_items:
        return None
    grades = {urlunsplit(e): TREC_GRADE_SCALE for e in expected_items}
    for item in items:
        grade = round(_grade(item, expected_items) * TREC_GRADE_SCALE)
        if grade > 0:
            grades.setdefault(urlunsplit(item), grade)
    qrels = [ir_measures.Qrel("q", url, grade) for url, grade in grades.items()]
    run = [ir_measures.ScoredDoc("q", urlunsplit(item), float(len(items) - rank)) for rank, item in enumerate(items)]
    if not run:
        return 0.0
    values = list(ir_measures.iter_calc([ir_measures.nDCG @ k], qrels, run))
    return float(values[0].value) if values else 0.0


def judged_only_at_k(
    ranked: Sequence[str], judgements: Mapping[str, int], *, relevant_min: int, k: int = 10
) -> dict[str, float] | None:
    """How far a ranking is judged, and its reciprocal rank over the judged pages only and over
    every page, for a question whose judgements are incomplete (a page without a grade is unjudged, not known to
    be irrelevant).

    ``ranked``: retrieved urls, best first (repeats of a page after its first are dropped);
    ``judgements``: url → integer grade of every judged page (0 and grades below
    ``relevant_min`` are judged non-relevant); urls match after :func:`url_normalise`, exactly
    (no sub-pages: a judged page is one page). Returns ``{"judged@1", "judged@k",
    "mrr@k_judged_only", "mrr@k_qrels"}`` in [0, 1]: the share of the first 1 and ``k`` distinct retrieved
    pages that are judged (``Judged@k``, Buckley & Voorhees 2004; of the pages retrieved when
    fewer than ``k``), and the reciprocal rank of
    the first page graded ≥ ``relevant_min`` in the condensed list, the ranking with every
    unjudged page removed first (trec_eval ``-J``; Sakai 2007, "Alternatives to Bpref"), cut at
    ``k`` judged pages; ``judged@*`` are 0 for an empty ranking. Computed with ``ir_measures``
    (its ``Judged`` and ``RR`` on the condensed run: its pytrec_eval backend has no judged-only
    reciprocal rank). The condensed reciprocal rank is an upper bound of what complete judgements
    would give: an unjudged page ranked above may be a wrong one. ``mrr@k_qrels``: the plain
    reciprocal rank against the same judgements (an unjudged page counts as non-relevant: the
    lower bound), which rises as pooled pages are graded. ``None`` when no judgement
    has a grade ≥ ``relevant_min``. Raises ``ValueError`` for ``k < 1``.
    """
    _check_k(k)
    Judged = ir_measures.Judged  # noqa: N806 (the measure's own name)
    grades: dict[str, int] = {}
    for url, grade in judgements.items():
        if url.strip():
            grades[url_normalise(url)] = int(grade)
    if not any(g >= relevant_min for g in grades.values()):
        return None
    pages = [urlunsplit(item) for item in _distinct(ranked, keep_fragment=True)]
    if not pages:
        return {"judged@1": 0.0, f"judged@{k}": 0.0, f"mrr@{k}_judged_only": 0.0, f"mrr@{k}_qrels": 0.0}
    qrels = [ir_measures.Qrel("q", url, grade) for url, grade in grades.items()]

    def run_of(urls: list[str]) -> list[ir_measures.ScoredDoc]:
        return [ir_measures.ScoredDoc("q", url, float(len(urls) - rank)) for rank, url in enumerate(urls)]

    judged = {
        str(m.measure): float(m.value) for m in ir_measures.iter_calc([Judged @ 1, Judged @ k], qrels, run_of(pages))
    }
    condensed = [url for url in pages if url in grades]  # what trec_eval -J ranks
    reciprocal = 0.0
    if condensed:
        values = list(ir_measures.iter_calc([ir_measures.RR(rel=relevant_min) @ k], qrels, run_of(condensed)))
        reciprocal = float(values[0].value) if values else 0.0
    full = list(ir_measures.iter_calc([ir_measures.RR(rel=relevant_min) @ k], qrels, run_of(pages)))
    return {
        "judged@1": judged.get(str(Judged @ 1), 0.0),
        f"judged@{k}": judged.get(str(Judged @ k), 0.0),
        f"mrr@{k}_judged_only": reciprocal,
        f"mrr@{k}_qrels": float(full[0].value) if full else 0.0,
    }
