"""Result handles: the program holds every intermediate result; the model sees only metadata.

A result is a session view on the catalog's read-only connection (`Catalog.create_temp_view`),
named `_ask_<token>_<n>` by the program. The model is shown `@n`, the columns, the row count and
a few sample rows, and refers to the result as `@n` (or `@latest`); the table turns that back
into the view name. Nothing the model types is ever used as a view name.
"""

from __future__ import annotations

import secrets
import threading
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from datasolver.ask.errors import UnknownResult
from datasolver.ask.refs import RESERVED_PREFIX, check_no_reserved, parse_ref, substitute_refs
from datasolver.data import QueryResult
from datasolver.data.names import quote_ident

if TYPE_CHECKING:
    from datasolver.data import Catalog

SAMPLE_ROWS = 3
EVIDENCE_NAME = "result_{index}"  # how a stored result is named inside evidence SQL


class Handle(BaseModel):
    """One stored result. `view` is the program's name for it and is never shown to the model."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=1)
    view: str
    operation: str
    sql: str
    parents: tuple[int, ...] = ()
    columns: tuple[str, ...]
    types: tuple[str, ...]
    rows: int = Field(ge=0)
    sample: tuple[tuple[Any, ...], ...] = ()
    notes: tuple[str, ...] = ()
    """What loading said about the tables the result was read from (`path: reason`)."""

    @model_validator(mode="after")
    def _consistent(self) -> Handle:
        if not self.view.startswith(RESERVED_PREFIX):
            raise ValueError(f"view name {self.view!r} must start with {RESERVED_PREFIX!r}")
        if len(self.columns) != len(self.types):
            raise ValueError("columns and types differ in length")
        if any(p >= self.index or p < 1 for p in self.parents):
            raise ValueError(f"parents {self.parents} must be earlier results than @{self.index}")
        return self

    @property
    def ref(self) -> str:
        """How the model refers to this result."""
        return f"@{self.index}"


class HandleTable:
    """The results of one question (or one MCP session) over a catalog. Thread-safe."""

    def __init__(self, catalog: Catalog, sample_rows: int = SAMPLE_ROWS) -> None:
        self.catalog = catalog
        self.sample_rows = sample_rows
        self._token = secrets.token_hex(4)
        self._handles: list[Handle] = []
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ lookup
    @property
    def handles(self) -> list[Handle]:
        with self._lock:
            return list(self._handles)

    def __len__(self) -> int:
        return len(self._handles)

    def latest(self) -> Handle | None:
        with self._lock:
            return self._handles[-1] if self._handles else None

    def get(self, ref: int | str) -> Handle:
        """The result for `3`, `"@3"`, `"latest"`; UnknownResult when there is none."""
        parsed = parse_ref(ref)
        with self._lock:
            if parsed == "latest" and self._handles:
                return self._handles[-1]
            if isinstance(parsed, int) and 1 <= parsed <= len(self._handles):
                return self._handles[parsed - 1]
            raise UnknownResult(f"no stored result {_shown(ref)}. {self._valid_refs()}")

    def _valid_refs(self) -> str:
        if not self._handles:
            return "No results are stored yet: run query (or another data tool) first."
        refs = ", ".join(h.ref for h in self._handles)
        return f"Stored results: {refs} (or @latest)."

    def from_clause(self, source: int | str) -> tuple[str, tuple[int, ...]]:
        """The quoted relation to select from for a source (a result reference or a table name),
        and the result indexes it depends on. Unknown tables raise UnknownTable."""
        ref = parse_ref(source)
        if ref is not None:
            handle = self.get(ref)
            return quote_ident(handle.view), (handle.index,)
        text = str(source)
        check_no_reserved(text)
        return quote_ident(self.catalog.resolve(text)), ()

    def columns_of(self, source: int | str) -> list[tuple[str, str]]:
        """(name, type) of each column of a result or a table."""
        ref = parse_ref(source)
        if ref is not None:
            handle = self.get(ref)
            return list(zip(handle.columns, handle.types))
        relation, _ = self.from_clause(source)
        probe = self.catalog.query(f"SELECT * FROM {relation} LIMIT 0", limit=0)
        return list(zip(probe.columns, probe.types))

    # ------------------------------------------------------------------ storing
    def query(self, sql: str, operation: str = "query") -> Handle:
        """Store the result of model-written SQL, in which `@N` / `@latest` name stored results."""
        text, parents = self.resolve_refs(sql)
        return self.store(text, operation, parents)

    def resolve_refs(self, sql: str) -> tuple[str, tuple[int, ...]]:
        """Model-written SQL (or a condition) with `@N` / `@latest` turned into view names, and
        the results it uses. Unknown references and reserved names raise before anything runs."""
        parents: list[int] = []

        def resolve(ref: int | str) -> str:
            handle = self.get(ref)
            parents.append(handle.index)
            return quote_ident(handle.view)

        text, _ = substitute_refs(sql, resolve)
        return text, tuple(dict.fromkeys(parents))

    def store(self, sql: str, operation: str, parents: tuple[int, ...] = ()) -> Handle:
        """Run program-composed SQL (guarded, repaired) and keep its result as the next handle."""
        with self._lock:
            index = len(self._handles) + 1
            view = f"{RESERVED_PREFIX}{self._token}_{index}"
            first = self.catalog.query(sql, limit=self.sample_rows)
            self.catalog.create_temp_view(view, first.sql or sql)  # a QueryError, like the query's own
            # A view renames repeated column names (id, id → id, id_1); read them back then.
            lowered = [c.lower() for c in first.columns]
            meta = first if len(set(lowered)) == len(lowered) else self.catalog.query(
                f"SELECT * FROM {quote_ident(view)}", limit=self.sample_rows
            )
            handle = Handle(
                index=index, view=view, operation=operation, sql=first.sql or sql, parents=parents,
                columns=tuple(meta.columns), types=tuple(meta.types), rows=meta.total_rows,
                sample=tuple(tuple(r) for r in meta.rows), notes=tuple(n.line() for n in first.notes),
            )
            self._handles.append(handle)
            return handle

    def close(self) -> None:
        """Forget every stored result and drop its view (the question or MCP session ended)."""
        with self._lock:
            for handle in self._handles:
                self.catalog.drop_temp_view(handle.view)
            self._handles.clear()

    # ------------------------------------------------------------------ reading
    def fetch(self, ref: int | str, max_rows: int | None = None, timeout_s: float | None = None) -> QueryResult:
        """Rows of a stored result (all of them when `max_rows` is None; `timeout_s` overrides the catalog's)."""
        handle = self.get(ref)
        limit = handle.rows if max_rows is None else max_rows
        return self.catalog.query(f"SELECT * FROM {quote_ident(handle.view)}", limit=max(limit, 0),
                                  timeout_s=timeout_s)

    def lineage(self, ref: int | str) -> list[Handle]:
        """The result and every result it was built from, oldest first."""
        seen: set[int] = set()
        stack = [self.get(ref)]
        while stack:
            handle = stack.pop()
            if handle.index in seen:
                continue
            seen.add(handle.index)
            stack.extend(self.get(p) for p in handle.parents)
        return [self.get(i) for i in sorted(seen)]

    def evidence_sql(self, ref: int | str) -> str:
        """Self-contained SQL for a result: its ancestors become CTEs named result_N, so the text
        runs as is with `datasolver sql DATA_DIR` and never mentions an internal view."""
        chain = self.lineage(ref)
        names = {quote_ident(h.view): EVIDENCE_NAME.format(index=h.index) for h in chain}

        def readable(sql: str) -> str:
            for view, name in names.items():
                sql = sql.replace(view, name)
            return sql.strip().rstrip(";")

        *ancestors, last = chain
        if not ancestors:
            return readable(last.sql)
        ctes = ",\n".join(f"{EVIDENCE_NAME.format(index=h.index)} AS (\n{readable(h.sql)}\n)" for h in ancestors)
        body = readable(last.sql)
        if body[:4].lower() == "with":  # a second WITH cannot follow ours: nest it
            body = f"SELECT * FROM (\n{body}\n)"
        return f"WITH {ctes}\n{body}"


def _shown(ref: int | str) -> str:
    text = str(ref).strip()
    return text if text.startswith("@") else f"@{text}" if text.isdigit() else repr(text)
