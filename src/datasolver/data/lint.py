"""`\\lint`: knowledge.md checked against the data it describes.

Three kinds of finding, each a fact about this task's tables:
- a table or column name the text mentions (in backticks, `table.column` too, or as a column of
  a column list: `data.knowledge_lists`) that does not exist, with the nearest real names;
- example SQL (a fenced block that is a query) that fails, or returns no rows, after repair;
- quoted values a line states for a column that occur in no row of that column.

Names come from the catalog's metadata (no table is loaded for them); SQL and values run as
read-only queries.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from datasolver.data.errors import DataError
from datasolver.data.knowledge_lists import find_column_lists
from datasolver.data.names import quote_ident, quote_literal
from datasolver.data.pipe_tables import split_row

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog

_BACKTICKED = re.compile(r"`([^`\n]{1,80})`")
_FENCE = re.compile(r"```[ \t]*(\w*)[ \t]*\n(.*?)```", re.DOTALL)
_QUERY_START = re.compile(r"^\s*(select|with)\b", re.IGNORECASE)
# A quote between letters is an apostrophe (Joe's Pizza), not the start or end of a value.
_QUOTED_VALUE = re.compile(r"""(?:(?<![A-Za-z0-9])'([^'\n]{1,60})'(?![A-Za-z0-9])|"([^"\n]{1,60})"|“([^”\n]{1,60})”)""")
_NOT_A_NAME = re.compile(r"[<>{}\[\]=:;,/\\*|]|\s")
# What follows these on a line is an example ("文本，如“北京市东城区”", "e.g. `t_2021`"): its names
# need not exist, and its values need only look like the column's (same shape), not occur in it.
_EXAMPLE = re.compile(r"例如|比如|譬如|举例|如[“\"'「『：:]|e\.g\.|\beg\b|for example|for instance|such as",
                      re.IGNORECASE)
_SHAPE_SQL = ("regexp_replace(regexp_replace(regexp_replace(CAST({c} AS VARCHAR), '[0-9]', '0', 'g'), "
              "'[A-Za-z]+', 'a', 'g'), '[\u4e00-\u9fff]+', '一', 'g')")
# A value after these is what the data does not hold ("'Mississippi' instead of 'Mississippi River'").
_COUNTER_EXAMPLE = re.compile(r"instead of\s*$|rather than\s*$|而不是\s*$|而非\s*$", re.IGNORECASE)
MAX_FINDINGS = 40
MAX_VALUE_CHECKS = 20
VALUE_CHECK_MAX_ROWS = 200_000  # stated values are looked up only in tables this small (cheap count)


@dataclass
class LintReport:
    """Findings of one knowledge.md against the data, and how much was checked."""

    findings: list[str] = field(default_factory=list)
    names_checked: int = 0
    queries_checked: int = 0
    values_checked: int = 0

    def render(self, max_lines: int | None = None) -> str:
        head = (f"knowledge.md lint: {len(self.findings)} finding(s) ({self.names_checked} names, "
                f"{self.queries_checked} example queries, {self.values_checked} stated values checked)")
        lines = [f"- {f}" for f in self.findings]
        if max_lines is not None and len(lines) > max_lines - 1:
            keep = max(max_lines - 2, 0)
            lines = lines[:keep] + [f"- … {len(self.findings) - keep} more: run `\\lint`"]
        return "\n".join([head] + lines)


def lint_knowledge(catalog: Catalog, knowledge: str) -> LintReport:
    """Check `knowledge` (the text of knowledge.md) against the catalog's tables."""
    report = LintReport()
    tables = {t.name: t for t in catalog.tables()}
    # Columns the metadata does not list (SQLite, JSON tables): SQLite's schema says them for free;
    # the rest are loaded only when a name would otherwise be reported missing.
    table_columns = {name: info.columns or _columns(catalog, name, load=False) for name, info in tables.items()}
    mentioned = _mentioned_names(knowledge)
    names = _known_names(tables, table_columns)
    if any(not cols for cols in table_columns.values()) and _unresolved(mentioned, names, table_columns):
        table_columns = {name: cols or _columns(catalog, name, load=True) for name, cols in table_columns.items()}
        names = _known_names(tables, table_columns)
    _check_names(mentioned, names, table_columns, report)
    _check_queries(catalog, knowledge, report)
    _check_values(catalog, knowledge, tables, table_columns, set(names), report)
    report.findings = report.findings[:MAX_FINDINGS]
    return report


def _columns(catalog: Catalog, table: str, *, load: bool) -> list[str] | None:
    try:
        return catalog.column_names(table, load=load)
    except DataError:
        return None  # a table that cannot be read: its columns stay unknown


def _unresolved(mentioned: list[str], names: dict[str, str], table_columns: dict[str, list[str] | None]) -> bool:
    exact = {real.lower() for real in names.values()} | set(names)
    return any(m.lower() not in exact and _key(m) not in names and not _qualified(m, names, table_columns)
               for m in mentioned)


def _known_names(tables: dict, table_columns: dict[str, list[str] | None]) -> dict[str, str]:
    """Normalized key → the real name, for every table, alias and column."""
    out: dict[str, str] = {}
    for name, info in tables.items():
        for alias in [name, info.source_name, *info.aliases]:
            if alias:
                out.setdefault(_key(alias), name)
    for column in sorted({c for cols in table_columns.values() for c in (cols or [])}):
        out.setdefault(_key(column), column)
    return out


def _key(name: str) -> str:
    return unicodedata.normalize("NFKC", name).strip().strip('"').lower()


def _mentioned_names(text: str) -> list[str]:
    found = [m.group(1).strip() for line in text.splitlines() for m in _BACKTICKED.finditer(line)
             if not _EXAMPLE.search(line[:m.start()])]
    found += [name.strip("`") for column_list in find_column_lists(text.splitlines()) for name in column_list.names()]
    return list(dict.fromkeys(n for n in found if n and not _NOT_A_NAME.search(n) and not n[0].isdigit()))


def _check_names(mentions: list[str], names: dict[str, str], table_columns: dict[str, list[str] | None],
                 report: LintReport) -> None:
    keys = list(names)
    exact = {real.lower() for real in names.values()} | {k for k in keys}
    for mentioned in mentions:
        report.names_checked += 1
        if mentioned.lower() in exact or _qualified(mentioned, names, table_columns):
            continue
        prefix, dot, column = mentioned.rpartition(".")
        table = names.get(_key(prefix)) if dot else None
        if table in table_columns and table_columns[table]:  # `table.column` of a real table
            near = difflib.get_close_matches(column, table_columns[table] or [], n=3, cutoff=0.6)
            report.findings.append(f"table `{table}` has no column `{column}`"
                                   + (f"; nearest: {', '.join(f'`{c}`' for c in near)}" if near else ""))
            continue
        key = _key(mentioned)
        if key in names:  # equal up to full-width/half-width forms: DuckDB will not find it
            report.findings.append(f"`{mentioned}` is written `{names[key]}` in the data")
            continue
        near = difflib.get_close_matches(key, keys, n=3, cutoff=0.6)
        if near:
            shown = ", ".join(f"`{real}`" for real in dict.fromkeys(names[k] for k in near))
            report.findings.append(f"no table or column named `{mentioned}`; nearest: {shown}")


def _qualified(mentioned: str, names: dict[str, str], table_columns: dict[str, list[str] | None]) -> bool:
    """Whether `mentioned` is `table.column` for a table (name, alias, source name) that has
    that column (both up to case and full-width forms)."""
    prefix, dot, column = mentioned.rpartition(".")
    table = names.get(_key(prefix)) if dot else None
    return table in table_columns and _key(column) in {_key(c) for c in table_columns[table] or []}


def _check_queries(catalog: Catalog, text: str, report: LintReport) -> None:
    for number, match in enumerate(_FENCE.finditer(text), 1):
        language, body = match.group(1).lower(), match.group(2).strip()
        if language not in ("", "sql") or not _QUERY_START.match(body):
            continue
        report.queries_checked += 1
        label = f"example SQL #{number} (`{_one_line(body)[:60]}`)"
        try:
            result = catalog.query(body, limit=1)
        except DataError as exc:
            report.findings.append(f"{label} fails: {_one_line(str(exc))[:200]}")
            continue
        if result.total_rows == 0:
            report.findings.append(f"{label} returns no rows")
        elif result.rewrites:
            report.findings.append(f"{label} runs only after repair: {'; '.join(result.rewrites)[:200]}")


def _check_values(catalog: Catalog, text: str, tables: dict, table_columns: dict[str, list[str] | None],
                  names: set[str], report: LintReport) -> None:
    """Quoted values on a line that names a column; a quoted table or column name ("the 'kid'
    column of the 'keyword' table") is a name, not a value, and one after "instead of" (a
    counter-example) is not checked. The values of one column found in no row make one finding."""
    by_column: dict[str, list[str]] = {}
    for name, info in tables.items():
        if info.rows is None or info.rows > VALUE_CHECK_MAX_ROWS:
            continue
        for column in table_columns.get(name) or []:
            by_column.setdefault(_key(column), []).append(name)
    for line in text.splitlines():
        values = {value: bool(_EXAMPLE.search(line[:m.start() + 1])) for m in _QUOTED_VALUE.finditer(line)
                  if _key(value := next(g for g in m.groups() if g is not None)) not in names
                  and not _COUNTER_EXAMPLE.search(line[:m.start()])}
        if not values:
            continue
        mentioned = [n for n in re.findall(r"`([^`]+)`", line) + _first_cell(line) if _key(n) in by_column]
        for column_key in dict.fromkeys(_key(n) for n in mentioned):
            absent = []
            for value, example in values.items():
                if report.values_checked >= MAX_VALUE_CHECKS:
                    break
                report.values_checked += 1
                if not example and not _occurs(catalog, by_column[column_key], column_key, value):
                    absent.append(repr(value))
                elif example:
                    seen = _unlike(catalog, by_column[column_key], column_key, value)
                    if seen is not None:
                        report.findings.append(f"example value {value!r} stated for `{column_key}` has a form no "
                                               f"row of it has (a row holds {seen!r})")
            if absent:
                said = f"value {absent[0]} stated" if len(absent) == 1 else f"values {', '.join(absent)} stated"
                report.findings.append(f"{said} for `{column_key}` occur{'s' if len(absent) == 1 else ''} in no row of it")
            if report.values_checked >= MAX_VALUE_CHECKS:
                return


def _first_cell(line: str) -> list[str]:
    """The first cell of a table row (where a column list names its column)."""
    return split_row(line)[:1] if line.lstrip().startswith("|") else []


def _occurs(catalog: Catalog, tables: list[str], column_key: str, value: str) -> bool:
    for table in tables:
        real = next((c for c in _columns(catalog, table, load=False) or [] if _key(c) == column_key), None)
        if real is None:
            continue
        sql = (f"SELECT 1 FROM {quote_ident(table)} WHERE CAST({quote_ident(real)} AS VARCHAR) = "
               f"{quote_literal(value)} LIMIT 1")
        try:
            if _own_rows(catalog, table, sql):
                return True
        except DataError:
            return True  # cannot tell: say nothing
    return False


def _unlike(catalog: Catalog, tables: list[str], column_key: str, value: str) -> str | None:
    """A value of the column when no row has `value`'s shape (every digit alike, every run of
    letters or of CJK characters alike), else None (also when it cannot tell)."""
    seen = None
    for table in tables:
        real = next((c for c in _columns(catalog, table, load=False) or [] if _key(c) == column_key), None)
        if real is None:
            continue
        column = quote_ident(real)
        shape = _SHAPE_SQL.format(c=column)
        # The first row in file order: any_value() picks by scan order, and findings go into prompts.
        sql = (f"SELECT bool_or({shape} = {_SHAPE_SQL.format(c=quote_literal(value))}), "
               f"arg_min(CAST({column} AS VARCHAR), rowid) FROM {quote_ident(table)} WHERE {column} IS NOT NULL")
        try:
            rows = _own_rows(catalog, table, sql)
        except DataError:
            return None
        if not rows or rows[0][0] is None:
            continue
        if rows[0][0]:
            return None
        seen = seen or rows[0][1]
    return seen


def _own_rows(catalog: Catalog, table: str, sql: str) -> list[tuple]:
    """Rows of a lint check's own SQL over `table` (loaded first): not a user's query, so it needs
    neither the guard nor repair."""
    catalog.load([table])
    return catalog.own_rows(sql)


def _one_line(text: str) -> str:
    return " ".join(text.split())
