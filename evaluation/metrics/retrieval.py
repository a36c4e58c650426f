"""Retrieval metrics with graded relevance by URL prefix.

A golden question names the pages whose retrieval counts as relevant (``expected_urls``). A
retrieved url earns a grade against them (:func:`url_grade`, the maximum over expected urls):

- **1.0** — the same page: the normalised urls (:func:`url_normalise`) are equal once the
  fragment is dropped on both sides (``…/page#causes`` is the page ``…/page``).
- **0.5** (:data:`PARTIAL_GRADE`) — a sub-page: same scheme and host, and the path continues the
  expected path after a ``/`` (``https://a.org/x/y`` under ``https://a.org/x``; the sibling
  ``https://a.org/xy`` is *not* under it). Every path is under the root ``/``. An expected url
  with a query string identifies one dynamic page and has no sub-pages.
- **0.0** — anything else (another host, another scheme, the same path with another query).

Metrics work on distinct pages: a ranked list is deduplicated by page (first occurrence kept)
before scoring, so a page retrieved twice is neither counted twice nor pushes later pages down.
Every metric returns ``None`` when the question has no expected urls (undefined, not zero), and
raises ``ValueError`` for ``k < 1``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from urllib.parse import SplitResult, urlsplit, urlunsplit

PARTIAL_GRADE = 0.5
EXACT_GRADE = 1.0

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


def _page(url: str) -> SplitResult:
    """The normalised url without its fragment: the identity of a page."""
    return urlsplit(url_normalise(url))._replace(fragment="")


def _is_sub_page(page: SplitResult, parent: SplitResult) -> bool:
    if not parent.netloc or parent.query:
        return False
    if (page.scheme, page.netloc) != (parent.scheme, parent.netloc):
        return False
    prefix = parent.path if parent.path.endswith("/") else parent.path + "/"
    return page.path.startswith(prefix) and page.path != parent.path


def _grade(page: SplitResult, expected_pages: Sequence[SplitResult]) -> float:
    grade = 0.0
    for parent in expected_pages:
        if page == parent:
            return EXACT_GRADE
        if _is_sub_page(page, parent):
            grade = PARTIAL_GRADE
    return grade


def _distinct_pages(urls: Sequence[str]) -> list[SplitResult]:
    """Distinct pages of ``urls`` in their given order (first occurrence kept); blanks skipped."""
    pages: dict[str, SplitResult] = {}
    for url in urls:
        if url and url.strip():
            page = _page(url)
            pages.setdefault(urlunsplit(page), page)
    return list(pages.values())


def url_grade(url: str, expected: Sequence[str]) -> float:
    """Grade of ``url`` against the expected urls: 1.0, :data:`PARTIAL_GRADE` or 0.0 (module
    docstring); the maximum over ``expected``. 0.0 when ``expected`` is empty or ``url`` blank."""
    if not url or not url.strip():
        return 0.0
    return _grade(_page(url), _distinct_pages(expected))


def ranked_urls(chunk_scores: Sequence[dict]) -> list[str]:
    """Distinct pages in rank order from ``Answer.chunk_scores``.

    ``chunk_scores``: rows with ``"url"`` (str or ``None``) and ``"rank"`` (int, 1 = best); rows
    are ordered by ``rank`` (a row without an int rank keeps its place after the ranked rows).
    Rows with a missing, ``None`` or blank url are skipped. Urls are returned normalised
    (:func:`url_normalise`) without fragment, one per page: several chunks of one document
    give one entry, at its best chunk's rank.
    """

    def rank_of(row: dict) -> float:
        rank = row.get("rank")
        return rank if isinstance(rank, int) and not isinstance(rank, bool) else math.inf

    urls = [row.get("url") for row in sorted(chunk_scores, key=rank_of)]
    return [urlunsplit(page) for page in _distinct_pages([u for u in urls if isinstance(u, str)])]


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")


def _discount(position: int) -> float:
    """1 / log2(position + 1) for a 1-based position."""
    return 1.0 / math.log2(position + 1)


def ndcg_at_k(ranked: Sequence[str], expected: Sequence[str], *, k: int = 5) -> float | None:
    """Normalised discounted cumulative gain of the first ``k`` distinct pages, in [0, 1].

    DCG@k = Σ_{i=1..k} grade_i / log2(i + 1) with ``grade_i`` = :func:`url_grade` of the page at
    position ``i`` (Järvelin & Kekäläinen 2002, "Cumulated gain-based evaluation of IR
    techniques", ACM TOIS 20(4), with the log2(i + 1) discount of Burges et al. 2005 applied from
    position 1). IDCG@k is the DCG of the ideal ordering of every known relevant item: each
    distinct expected page at grade 1.0, plus each distinct retrieved page (anywhere in
    ``ranked``) with partial credit at :data:`PARTIAL_GRADE`, sorted by grade, first ``k``.
    Every gain in the ranked top ``k`` is one of those items, so DCG ≤ IDCG.

    ``None`` when ``expected`` has no non-blank url. Raises ``ValueError`` for ``k < 1``.
    """
    _check_k(k)
    expected_pages = _distinct_pages(expected)
    if not expected_pages:
        return None
    grades = [_grade(page, expected_pages) for page in _distinct_pages(ranked)]
    dcg = sum(grade * _discount(i) for i, grade in enumerate(grades[:k], start=1))
    ideal = sorted(
        [EXACT_GRADE] * len(expected_pages) + [g for g in grades if 0.0 < g < EXACT_GRADE],
        reverse=True,
    )
    idcg = sum(grade * _discount(i) for i, grade in enumerate(ideal[:k], start=1))
    return dcg / idcg


def mrr(ranked: Sequence[str], expected: Sequence[str]) -> float | None:
    """Reciprocal rank of the first relevant page (grade > 0, binary relevance), in [0, 1].

    Over the whole distinct-page list given (no cut-off); 0.0 when no page is relevant. The mean
    over questions is the MRR of Voorhees (1999, TREC-8 QA track report). ``None`` when
    ``expected`` has no non-blank url.
    """
    expected_pages = _distinct_pages(expected)
    if not expected_pages:
        return None
    for position, page in enumerate(_distinct_pages(ranked), start=1):
        if _grade(page, expected_pages) > 0.0:
            return 1.0 / position
    return 0.0


def precision_at_k(ranked: Sequence[str], expected: Sequence[str], *, k: int = 5) -> float | None:
    """Share of the first ``k`` distinct pages with grade > 0, in [0, 1].

    The denominator is ``k`` even when fewer pages were retrieved (Manning, Raghavan & Schütze
    2008, §8.4). ``None`` when ``expected`` has no non-blank url; ``ValueError`` for ``k < 1``.
    """
    _check_k(k)
    expected_pages = _distinct_pages(expected)
    if not expected_pages:
        return None
    relevant = sum(1 for page in _distinct_pages(ranked)[:k] if _grade(page, expected_pages) > 0.0)
    return relevant / k


def recall_at_k(ranked: Sequence[str], expected: Sequence[str], *, k: int = 5) -> float | None:
    """Share of the distinct expected pages covered by the first ``k`` distinct pages, in [0, 1].

    An expected page is covered by a retrieved page that is the same page or a sub-page of it
    (module docstring). ``None`` when ``expected`` has no non-blank url; ``ValueError`` for
    ``k < 1``.
    """
    _check_k(k)
    expected_pages = _distinct_pages(expected)
    if not expected_pages:
        return None
    top = _distinct_pages(ranked)[:k]
    covered = sum(1 for parent in expected_pages if any(p == parent or _is_sub_page(p, parent) for p in top))
    return covered / len(expected_pages)
