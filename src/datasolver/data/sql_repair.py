"""The engine's execution boundary: a query runs as given, and only when DuckDB rejects it are the
rewrites of the on-reject stage tried (`ON_REJECT` in `rules/engine_stages.py`, in order: bracketed
names quoted, bare column names quoted, names with their whitespace changed put right, double-quoted
text values as literals, another dialect transpiled; each rule's module says what it answers).

The first rewrite that executes wins and is reported, with the rule that wrote it. Nothing fuzzy: an
ambiguous or unmatched name is left alone, and when every rewrite fails the original error is
re-raised, except when the SQL as written did not parse and a rewrite did: then the rewrite's error (a
missing column, a wrong type), naming the rewrite, is the one raised, since it is the fault left to
fix. The rules work on tokens from a small scanner, so string literals and comments are never
rewritten. What applies before the first run (the before-run stage) is the catalog's (`Catalog._run`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import duckdb

from datasolver.data.errors import CellTooLarge, QueryInterrupted
from datasolver.data.rules.engine_stages import ON_REJECT
from datasolver.data.rules.protocol import KnownColumns

T = TypeVar("T")


@dataclass
class RepairOutcome(Generic[T]):
    """What the SQL that finally worked returned, that SQL, and the rewrites that made it: their notes
    and the names of the rules that wrote them (before-run rules first, then the on-reject rule)."""

    value: T
    sql: str
    rewrites: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RepairAttempt:
    """One rewrite that was tried and failed; attached to the re-raised original error."""

    sql: str
    rewrites: tuple[str, ...]
    error: str
    rule: str  # the on-reject rule that wrote it


# Failures a rewrite cannot fix; retrying would only repeat a timeout or an OOM.
_NOT_REPAIRABLE: tuple[type[BaseException], ...] = (
    duckdb.InterruptException, duckdb.OutOfMemoryException, QueryInterrupted, CellTooLarge,
)


def execute_with_repair(
    sql: str, run: Callable[[str], T], columns: Callable[[], Iterable[str]],
    text_columns: Callable[[], Iterable[str]] = lambda: (),
) -> RepairOutcome[T]:
    """Run ``sql``; if it fails, try the rewrites of the on-reject stage (`ON_REJECT`) in order and
    return the first that executes, a rule called only when the rewrites before it failed. If none
    does, re-raise the original error with ``repair_attempts`` (a list of RepairAttempt) attached.

    Args:
        sql: the SQL as the caller wrote it.
        run: executes SQL and raises on failure.
        columns: all real column names; called at most once, and only if a rule needs it.
        text_columns: the names of the text (VARCHAR) columns among them; called at most once, only
            for a query with a double-quoted name.
    """
    try:
        return RepairOutcome(run(sql), sql, [])
    except Exception as exc:  # noqa: BLE001 - run may raise anything; we re-raise it below
        original = exc
    if isinstance(original, _NOT_REPAIRABLE):
        raise original

    known = KnownColumns(columns, text_columns)
    rewrites = ((rule.__name__, candidate, notes) for rule in ON_REJECT for candidate, notes in rule(sql, known))
    attempts: list[RepairAttempt] = []
    further: Exception | None = None  # the first rewrite's error past the parser, when the SQL did not parse
    tried = {sql}
    for rule, candidate, notes in rewrites:
        if candidate in tried:
            continue
        tried.add(candidate)
        try:
            return RepairOutcome(run(candidate), candidate, notes, [rule])
        except Exception as exc:  # noqa: BLE001 - a failed rewrite is recorded, not raised
            attempts.append(RepairAttempt(candidate, tuple(notes), _first_line(exc), rule))
            if isinstance(exc, _NOT_REPAIRABLE):
                break
            if further is None and notes and _past_the_parser(original, exc):
                further = _rewritten_error(exc, notes)
    raised = further if further is not None else original
    try:
        raised.repair_attempts = attempts  # type: ignore[attr-defined]
    except AttributeError:  # exception types without __dict__: the error itself is what matters
        pass
    raise raised


def _past_the_parser(original: Exception, exc: Exception) -> bool:
    """The SQL as written did not parse, and a rewrite of it parsed and failed later (a missing column,
    a wrong type): that later fault is the one to tell whoever wrote the query. A syntax error at a
    column written bare (`绿化率(%)`) hides it, and a model told "syntax error" writes the query again."""
    return (isinstance(original, duckdb.ParserException) and isinstance(exc, duckdb.Error)
            and not isinstance(exc, duckdb.ParserException))


def _rewritten_error(exc: Exception, notes: list[str]) -> Exception:
    """`exc` (a DuckDB error of a rewrite) with the rewrites named, as the same DuckDB error type."""
    try:
        return type(exc)(f"{exc} (the error of the query once rewritten: {'; '.join(dict.fromkeys(notes))})")
    except Exception:  # noqa: BLE001 - an error type that cannot be built from a message: as it is
        return exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
