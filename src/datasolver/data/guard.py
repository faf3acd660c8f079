"""Read-only guard for the exploration path, decided by DuckDB's own parser.

Statement kinds as DuckDB 2.0.1 parses them (measured): SELECT, WITH, UNION/EXCEPT/
INTERSECT, VALUES, FROM-first, DESCRIBE/DESC, SHOW, SUMMARIZE and PIVOT … IN (…) are all
``SELECT``; EXPLAIN [ANALYZE] is ``EXPLAIN`` whatever it wraps; a PRAGMA call is ``PRAGMA``
but ``PRAGMA x=1`` is ``SET``; PIVOT without an IN list is ``MULTI``; INSTALL is ``LOAD``;
CHECKPOINT and CALL are ``CALL``. Because the decision is made on the parse, a column or
string named ``update`` or ``load`` is never mistaken for a statement.

This is the friendly first line of defence; the locked, read-only connection
(``locked_connection_config``) is the second and blocks whatever gets past it.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import json
import re
from collections.abc import Iterator
from typing import Any

import duckdb

from .errors import ReadOnlyViolation, SqlSyntaxError
from .sql_tokens import significant, tokenize

ALLOWED = (
    "SELECT / WITH / UNION·EXCEPT·INTERSECT / VALUES, DESCRIBE, SHOW, SUMMARIZE, PIVOT, "
    "EXPLAIN <one of those>, PRAGMA table_info('t') (and show_tables, database_size, version)"
)

# Informational PRAGMAs only; every other one changes a setting or touches storage.
# (PRAGMA show('t') does not parse in 2.0.1: use DESCRIBE t.) `database_list` is not one of them:
# it lists each database's file, the catalog's temporary folder or the table cache under the home
# folder (see MACHINE_FUNCTIONS).
READ_ONLY_PRAGMAS = frozenset(
    {
        "table_info",
        "show_tables",
        "show_tables_expanded",
        "show_databases",
        "database_size",
        "version",
        "platform",
        "functions",
        "collations",
    }
)

# Table functions that read files, other databases or arbitrary SQL text.
FILE_FUNCTIONS = frozenset(
    {
        "glob",
        "sqlite_attach",
        "parquet_metadata",
        "parquet_schema",
        "parquet_file_metadata",
        "parquet_kv_metadata",
        "parquet_bloom_probe",
        "iceberg_metadata",
        "iceberg_snapshots",
        "st_read",
        "st_read_meta",
        "query",  # runs SQL text this guard cannot see
        "query_table",
    }
)
# DuckDB's own listings and settings that name paths of this machine (the catalog's temporary folder,
# the table cache under the home folder, so the user's name, the secret and extension folders, the
# files a query may read) or its environment: refused like the file functions, so neither the model
# nor an MCP client learns them. (`duckdb_extensions()` and `duckdb_secrets()` even fail with an
# error naming the home folder.) None of them says anything about the task's data.
MACHINE_FUNCTIONS = frozenset(
    {
        "duckdb_databases",
        "duckdb_settings",
        "current_setting",
        "duckdb_extensions",
        "duckdb_temporary_files",
        "duckdb_external_file_cache",
        "duckdb_secrets",
        "which_secret",
        "duckdb_logs",
        "getenv",
        "pragma_database_list",
    }
)
MACHINE_TABLES = frozenset({"pg_settings"})  # pg_catalog's view of duckdb_settings()
_FILE_PATTERN = re.compile(r"^read_|_scan$")  # read_csv, read_json_auto…, parquet_scan, sqlite_scan…
# A table name DuckDB would hand to a replacement scan, i.e. read as a file.
_PATH_LIKE = re.compile(
    r"[/\\*?]|^[a-z][a-z0-9+]*://|\.(csv|tsv|txt|parquet|json|jsonl|ndjson|xlsx?|db|sqlite3?|duckdb|arrow)"
    r"(\.(gz|zst|bz2|xz))?$",
    re.IGNORECASE,
)
# Statement keywords that write, change settings or reach outside: an unparsable statement that
# starts with one is refused as a write; one that starts with any other word is a syntax error.
_WRITE_LEADERS = frozenset({
    "insert", "update", "delete", "merge", "upsert", "replace", "create", "drop", "alter", "truncate",
    "copy", "attach", "detach", "install", "load", "force", "set", "reset", "call", "checkpoint", "vacuum",
    "analyze", "analyse", "export", "import", "use", "begin", "start", "commit", "end", "rollback", "abort",
    "savepoint", "release", "transaction", "grant", "revoke", "comment", "prepare", "execute", "deallocate",
    "update_extensions", "lock", "refresh", "do", "listen", "notify", "unlisten",
})
_READ_LEADERS = frozenset({"select", "with", "from", "values", "table", "describe", "desc", "show",
                           "summarize", "explain", "pragma", "pivot", "unpivot", "pivot_wider", "pivot_longer"})


# Words that read the catalog's own metadata: the schema views and DuckDB's, PostgreSQL's and
# SQLite's catalog tables, and the PRAGMAs that list tables.
CATALOG_WORDS = frozenset({
    "information_schema", "pg_catalog", "pg_tables", "pg_views", "pg_class", "pg_attribute", "pg_namespace",
    "duckdb_tables", "duckdb_columns", "duckdb_views", "duckdb_constraints", "duckdb_indexes",
    "sqlite_master", "sqlite_schema", "show_tables", "show_tables_expanded",
})


def lists_the_catalog(sql: str) -> bool:
    """Whether ``sql`` asks about the catalog as a whole: SHOW TABLES, SHOW ALL TABLES, SHOW or
    DESCRIBE with no table, PRAGMA show_tables, information_schema, duckdb_tables() and the like.
    The catalog registers its tables lazily, so it loads every one before such a query (a query
    about one table names it and loads only it)."""
    sig = significant(tokenize(sql))
    if any(t.kind == "word" and t.text.lower() in CATALOG_WORDS for t in sig):
        return True
    words = [t.text.lower() for t in sig if t.text != ";"]
    return bool(words) and words[0] in ("show", "describe", "desc") and words[1:] in ([], ["tables"], ["all", "tables"])


def shows_how_tables_are_read(sql: str) -> bool:
    """Whether the answer to ``sql`` can show how a table is read: a listing of the catalog (a view's
    SQL in duckdb_views() or information_schema.views) or an EXPLAIN (EXPLAIN ANALYZE names the file
    a scan reads). The catalog runs such a query over loaded tables only, never over a file read
    straight, whose path would then be in the answer."""
    if lists_the_catalog(sql):
        return True
    sig = significant(tokenize(sql))
    return any(t.kind == "word" and t.text.lower() == "explain" for t in sig)


def check_read_only(sql: str, parser: duckdb.DuckDBPyConnection | None = None) -> None:
    """Raise ReadOnlyViolation unless ``sql`` is one statement that only reads.

    More than one statement (``SELECT 1; SELECT 2``) is refused with SqlSyntaxError: DuckDB would
    run each and give back only the last one's rows.

    SQL DuckDB cannot parse (T-SQL, MySQL, …) passes when each statement starts with a
    reading keyword, so repair and execution can report the real error. ``parser`` is a
    connection to parse with (a cursor of it; nothing runs on its data), by default a private
    empty database: a process that already holds one, such as a sandboxed solver.py run, saves
    opening a second (~15-25 ms).
    """
    if all(t.text == ";" for t in significant(tokenize(sql))):
        raise ReadOnlyViolation("empty SQL: write one SELECT (or DESCRIBE / SHOW) statement")
    with _cursor(parser) as cur:
        try:
            statements = cur.extract_statements(sql)
        except duckdb.Error:
            _check_unparsable(sql)
            return
        for statement in statements:
            _check_statement(cur, statement.type, statement.query)
        if len(statements) > 1:  # after the checks: a write among them is refused as a write
            _refuse_several(len(statements), sql)


def locked_connection_config() -> dict[str, Any]:
    """DuckDB config of the exploration connection (open it read_only as well): no file or
    network access, no extension install or autoload, and no changing that later."""
    return {
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "lock_configuration": True,
    }


# --------------------------------------------------------------------------- statements


def _check_statement(cur: duckdb.DuckDBPyConnection, kind: duckdb.StatementType, text: str) -> None:
    leader = _leading_word(text)
    if kind == duckdb.StatementType.SELECT:
        _check_no_file_access(cur, text)
    elif kind == duckdb.StatementType.EXPLAIN:
        inner = _after_explain(text)
        if not significant(tokenize(inner)):
            raise ReadOnlyViolation("EXPLAIN needs a statement to explain, e.g. EXPLAIN SELECT …")
        for statement in cur.extract_statements(inner):
            _check_statement(cur, statement.type, statement.query)
    elif kind == duckdb.StatementType.PRAGMA:
        name = _pragma_name(text)
        if f"pragma_{name}" in MACHINE_FUNCTIONS:
            _reject_machine_listing(f"PRAGMA {name}")
        if name not in READ_ONLY_PRAGMAS:
            raise ReadOnlyViolation(
                f"PRAGMA {name} is not allowed on the read-only exploration path; "
                f"read-only PRAGMAs: {', '.join(sorted(READ_ONLY_PRAGMAS))}"
            )
    elif kind == duckdb.StatementType.MULTI and leader in ("pivot", "unpivot", "pivot_wider", "pivot_longer"):
        _check_no_file_access_by_tokens(text)  # PIVOT without IN cannot be serialized
    else:
        # INSTALL parses as LOAD and PRAGMA x=1 as SET: name both the word and the kind
        plain = leader.upper() == kind.name or leader in ("with", "")
        label = kind.name if plain else f"{leader.upper()} ({kind.name} statement)"
        hint = " (use SELECT * FROM pragma_table_info('t') or DESCRIBE t)" if leader == "call" else ""
        raise ReadOnlyViolation(
            f"{label} is not allowed: the exploration connection is read-only{hint}. Allowed: {ALLOWED}"
        )


def _check_unparsable(sql: str) -> None:
    """Each ;-separated piece must at least start like a read (SELECT, WITH, …) and call no
    file-reading function. A piece that starts with a writing keyword is a ReadOnlyViolation
    (whatever else the SQL holds); one that starts with no statement keyword at all is a
    SqlSyntaxError."""
    _check_no_file_access_by_tokens(sql)
    sig = significant(tokenize(sql))
    starts = [0] + [k + 1 for k, t in enumerate(sig) if t.text == ";"]
    leaders = [sig[k] for k in starts if k < len(sig)]
    unknown = [t for t in leaders if t.text.lower() not in _READ_LEADERS and t.text not in ("(", ";")]
    for token in unknown:
        if token.text.lower() in _WRITE_LEADERS:
            raise ReadOnlyViolation(
                f"{token.text.upper()} is not allowed: the exploration connection is read-only. Allowed: {ALLOWED}"
            )
    if len(leaders) > 1 and not unknown:
        _refuse_several(len(leaders), sql)
    if unknown:
        word = unknown[0].text
        near = difflib.get_close_matches(word.lower(), sorted(_READ_LEADERS), n=1, cutoff=0.6)
        hint = f" (did you mean {near[0].upper()}?)" if near else ""
        raise SqlSyntaxError(
            f"syntax error at {word!r}: it does not start an SQL statement{hint}. "
            "Write one SELECT (or WITH, DESCRIBE, SHOW) statement", sql)


def _refuse_several(count: int, sql: str) -> None:
    raise SqlSyntaxError(
        f"{count} statements: only one statement runs at a time (DuckDB would run each and show only the "
        "last one's rows). Send them one by one, or combine them into one query (UNION ALL, a join, "
        "subqueries or WITH)", sql)


def _leading_word(text: str) -> str:
    sig = significant(tokenize(text))
    return next((t.text.lower() for t in sig if t.text != "("), "")


def _after_explain(text: str) -> str:
    """The statement an EXPLAIN [ANALYZE] [(options)] wraps."""
    tokens = tokenize(text)
    sig = [t for t in tokens if t.kind not in ("ws", "comment")]
    k = 1  # sig[0] is EXPLAIN
    if k < len(sig) and sig[k].text.lower() in ("analyze", "analyse"):
        k += 1
    if k < len(sig) and sig[k].text == "(" and k + 1 < len(sig) and sig[k + 1].kind == "word" \
            and sig[k + 1].text.lower() not in ("select", "with", "from", "values", "table"):
        depth = 0
        for k in range(k, len(sig)):
            depth += {"(": 1, ")": -1}.get(sig[k].text, 0)
            if depth == 0:
                k += 1
                break
    return text[sig[k].start:] if k < len(sig) else ""


def _pragma_name(text: str) -> str:
    sig = significant(tokenize(text))
    return sig[1].text.lower() if len(sig) > 1 else ""


# --------------------------------------------------------------------------- file access


def _check_no_file_access(cur: duckdb.DuckDBPyConnection, text: str) -> None:
    tree = json.loads(cur.execute("SELECT json_serialize_sql(?)", [text]).fetchone()[0])
    if tree.get("error"):  # DESCRIBE-style forms the serializer refuses: fall back to tokens
        _check_no_file_access_by_tokens(text)
        return
    for node in _walk(tree):
        if node.get("class") == "FUNCTION" and _reads_files(str(node.get("function_name", ""))):
            _reject_file_function(str(node["function_name"]))
        if node.get("class") == "FUNCTION" and str(node.get("function_name", "")).lower() in MACHINE_FUNCTIONS:
            _reject_machine_listing(str(node["function_name"]) + "()")
        if node.get("type") == "BASE_TABLE" and str(node.get("table_name", "")).lower() in MACHINE_TABLES:
            _reject_machine_listing(str(node["table_name"]))
        if node.get("type") == "BASE_TABLE" and _PATH_LIKE.search(str(node.get("table_name", ""))):
            raise ReadOnlyViolation(
                f"FROM {node['table_name']!r} would read a file; files are not reachable here. "
                "Query the catalog's tables by name (SHOW TABLES lists them)"
            )


def _check_no_file_access_by_tokens(text: str) -> None:
    sig = significant(tokenize(text))
    for tok, nxt in zip(sig, sig[1:]):
        if tok.kind == "word" and nxt.text == "(" and _reads_files(tok.text):
            _reject_file_function(tok.text)
        if tok.kind == "word" and nxt.text == "(" and tok.text.lower() in MACHINE_FUNCTIONS:
            _reject_machine_listing(tok.text + "()")
    for tok in sig:
        if tok.kind in ("word", "ident") and tok.text.strip('"').lower() in MACHINE_TABLES:
            _reject_machine_listing(tok.text)


def _reads_files(name: str) -> bool:
    name = name.lower()
    return name in FILE_FUNCTIONS or bool(_FILE_PATTERN.search(name))


def _reject_file_function(name: str) -> None:
    raise ReadOnlyViolation(
        f"{name}() reads files or runs SQL text, which the exploration connection does not allow. "
        "Every source is already loaded: query the catalog's tables by name (SHOW TABLES lists them)"
    )


def _reject_machine_listing(name: str) -> None:
    raise ReadOnlyViolation(
        f"{name} lists DuckDB's own settings, databases or files on this machine, not the task's data, and is "
        "not available here. Query the catalog's tables by name (SHOW TABLES lists them; DESCRIBE t their columns)"
    )


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


# --------------------------------------------------------------------------- parser


@functools.cache
def _parser() -> duckdb.DuckDBPyConnection:
    """A private, empty, locked in-memory database used only to parse SQL; opening one
    costs ~20 ms, so it is opened once."""
    return duckdb.connect(":memory:", config=locked_connection_config())


@contextlib.contextmanager
def _cursor(parser: duckdb.DuckDBPyConnection | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor per check (~0.1 ms), so concurrent checks never share a connection."""
    cur = (parser if parser is not None else _parser()).cursor()
    try:
        yield cur
    finally:
        cur.close()
