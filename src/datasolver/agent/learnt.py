"""What the attempts of one task have learnt so far, handed to the next attempt in a few lines.

An attempt used to start from nothing but a line on how the previous one ended. A small model
then walks into the same wall again (a made-up table, a misspelt column, NO OUTPUT). This keeps,
across attempts, the tables explore_data read without error, the latest query that returned
rows, and the last distinct errors; the next attempt's opening ends with them (after the unchanged
first message, so a server's prompt cache still serves the prefix).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from datasolver.clip import clip
from datasolver.toolkit import ToolOutcome

MAX_ERRORS = 3
ERROR_CHARS = 200
QUERY_CHARS = 400


@dataclass
class Learnt:
    """Tables looked at, the latest query with rows, and errors met, over every attempt so far."""

    table_names: tuple[str, ...] = ()  # the task's tables (what a query may name)
    tables: list[str] = field(default_factory=list)
    rows_query: str | None = None
    errors: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # answer queries already run and why they failed

    def see(self, outcome: ToolOutcome, rows_query: str | None) -> None:
        """Learn from one tool outcome (``rows_query``: the SQL of a query result with rows)."""
        if outcome.ok:
            query = str(getattr(outcome.args, "query", "") or "").strip()  # an exploring call's query or command
            for name in _named(query, self.table_names):
                if name not in self.tables:
                    self.tables.append(name)
            if rows_query:
                self.rows_query = rows_query
            return
        first = next((line.strip() for line in outcome.text.splitlines() if line.strip()), outcome.kind)
        if outcome.submits and first == "NO OUTPUT":
            first = "NO OUTPUT (solver.py still answered `result = None`: nothing was written into it)"
        error = f"{outcome.name}: {clip(first, ERROR_CHARS)}"
        if error in self.errors:
            self.errors.remove(error)
        self.errors = [*self.errors, error][-MAX_ERRORS:]

    def lines(self) -> str:
        """A few lines for the next attempt's opening (`solver_learnt.md`), or "" when nothing was learnt."""
        lines = []
        if self.tables:
            lines.append("- tables looked at without error: " + ", ".join(self.tables))
        if self.rows_query:
            lines.append("- the latest query that returned rows: " + clip(" ".join(self.rows_query.split()), QUERY_CHARS))
        if self.errors:
            lines.append("- errors met (do not repeat them): " + "; ".join(self.errors))
        if self.rejected:
            lines.append("- answer queries already run that did not give the answer (do not write them again):")
            lines += [f"  - {line}" for line in self.rejected[-MAX_ERRORS:]]
        return "\n".join(lines)


def _named(query: str, names: Iterable[str]) -> list[str]:
    """The table names a query or `\\schema`/`\\joins` command mentions, as whole words."""
    lowered = query.lower()
    return [n for n in names if re.search(r"(?<![\w])" + re.escape(n.lower()) + r"(?![\w])", lowered)]
