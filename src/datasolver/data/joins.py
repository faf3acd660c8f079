"""`\\joins A B`: candidate join keys between two tables, with how well each really joins.

A candidate is a pair of columns with the same or similar names (case, `_`, an `id` suffix and
the table's own name ignored) and compatible types. For each, one query measures the share of
A's distinct non-null keys found in B and the fan-out (the most B rows one key matches), so a
look-alike key with 10% coverage stands next to the real one with 100%.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from datasolver.data.errors import DataError
from datasolver.data.names import quote_ident

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog

MAX_CANDIDATES = 8
NAME_SIMILARITY = 0.75
_NUMERIC = ("INT", "DOUBLE", "FLOAT", "DECIMAL", "REAL", "NUMERIC")


@dataclass
class JoinCandidate:
    """One candidate key pair and what joining on it does."""

    left: str
    right: str
    similarity: float
    left_keys: int = 0  # distinct non-null keys in A
    matched_keys: int = 0  # of them, found in B
    fan_out: int = 0  # most B rows for one matched key
    error: str | None = None

    @property
    def coverage(self) -> float:
        return self.matched_keys / self.left_keys if self.left_keys else 0.0


def join_candidates(catalog: Catalog, left: str, right: str) -> tuple[str, str, list[JoinCandidate]]:
    """(A's canonical name, B's, candidates best first). Raises UnknownTable for unknown names."""
    a, b = catalog.resolve(left), catalog.resolve(right)
    a_cols, b_cols = _columns(catalog, a), _columns(catalog, b)
    pairs = []
    for ac, at in a_cols:
        for bc, bt in b_cols:
            if not compatible_types(at, bt):
                continue
            score = _similarity(ac, a, bc, b)
            if score >= NAME_SIMILARITY:
                pairs.append(JoinCandidate(ac, bc, score))
    pairs.sort(key=lambda c: -c.similarity)
    candidates = pairs[:MAX_CANDIDATES]
    for candidate in candidates:
        _measure(catalog, a, b, candidate)
    candidates.sort(key=lambda c: (c.error is not None, -c.coverage, -c.similarity))
    return a, b, candidates


def render_joins(a: str, b: str, candidates: list[JoinCandidate]) -> str:
    if not candidates:
        return (f"no join key candidates between {a} and {b} (no columns with similar names and compatible "
                "types); look at both with \\schema")
    lines = [f"join key candidates {a} → {b} (share of {a}'s distinct keys found in {b}; "
             f"fan-out = most {b} rows for one key):"]
    for c in candidates:
        if c.error is not None:
            lines.append(f"  {a}.{c.left} = {b}.{c.right}: could not measure ({c.error})")
            continue
        lines.append(f"  {a}.{quote_ident(c.left)} = {b}.{quote_ident(c.right)}: {c.coverage:.1%} of "
                     f"{c.left_keys} keys found, fan-out {c.fan_out}")
    return "\n".join(lines)


def _columns(catalog: Catalog, table: str) -> list[tuple[str, str]]:
    result = catalog.query(f"SELECT * FROM {quote_ident(table)} LIMIT 0", limit=1)
    return list(zip(result.columns, (str(t).upper() for t in result.types)))


def compatible_types(a: str, b: str) -> bool:
    """Whether columns of DuckDB types `a` and `b` may hold the same keys (numbers, text, or one of each)."""
    numeric_a, numeric_b = any(n in a for n in _NUMERIC), any(n in b for n in _NUMERIC)
    text_a, text_b = "VARCHAR" in a, "VARCHAR" in b
    return (numeric_a and numeric_b) or (text_a and text_b) or (numeric_a and text_b) or (text_a and numeric_b)


def key_like(column: str) -> bool:
    """Whether a column is named as a key (`id`, `customer_id`, `authorid`, `zip_code`, `order_no`, `客户编号`)."""
    return bool(_KEY_NAME.search(column.casefold()))


_KEY_NAME = re.compile(r"(?:^|[^a-z])(?:id|key|code|no|uuid)$|[a-z]id$|编号$|代码$|编码$|id$")


def _stem(column: str, table: str) -> str:
    key = re.sub(r"[\s_\-]+", "", column.lower())
    singular = re.sub(r"[\s_\-]+", "", table.lower()).rstrip("s")
    if key in ("id", "key", "code", "no", "uuid"):
        return singular + key
    return key


def _similarity(ac: str, a: str, bc: str, b: str) -> float:
    left, right = _stem(ac, a), _stem(bc, b)
    if left == right:
        return 1.0
    return difflib.SequenceMatcher(None, left, right).ratio()


def _measure(catalog: Catalog, a: str, b: str, candidate: JoinCandidate) -> None:
    ak, bk = quote_ident(candidate.left), quote_ident(candidate.right)
    sql = (
        f"WITH ak AS (SELECT DISTINCT CAST({ak} AS VARCHAR) AS k FROM {quote_ident(a)} WHERE {ak} IS NOT NULL), "
        f"bk AS (SELECT CAST({bk} AS VARCHAR) AS k, count(*) AS n FROM {quote_ident(b)} "
        f"WHERE {bk} IS NOT NULL GROUP BY 1) "
        "SELECT count(*), count(bk.k), coalesce(max(bk.n), 0) FROM ak LEFT JOIN bk ON ak.k = bk.k"
    )
    try:
        row = catalog.query(sql, limit=1).rows[0]
    except DataError as exc:
        candidate.error = str(exc).splitlines()[0][:200]
        return
    candidate.left_keys, candidate.matched_keys, candidate.fan_out = int(row[0]), int(row[1]), int(row[2])
