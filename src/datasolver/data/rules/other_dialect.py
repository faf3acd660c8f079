"""The `other_dialect` rule of the on-reject stage: a model wrote another dialect's SQL (T-SQL's `TOP`
and `ISNULL(x, y)`, MySQL's `DATE_FORMAT`, SQLite's `strftime('%Y', d)`, PostgreSQL's `to_char`);
sqlglot transpiles it from the dialect its telltale features point at, PostgreSQL's date templates
by `pg_dates` first. Each transpiled query is also given `spaced_columns`' repair, and a date
template read with `strptime` also takes a DATE or TIMESTAMP value (`pg_dates.read_dates_as_text`),
since the loader types `31/12/2023` as DATE. Its bound: the query text it reads (sqlglot's cost
grows with it)."""

from __future__ import annotations

from collections.abc import Iterable

from datasolver.data.rules.bracket_names import identifier_bracket_end
from datasolver.data.rules.pg_dates import read_dates_as_text, rewrite_pg_dates
from datasolver.data.rules.protocol import KnownColumns
from datasolver.data.rules.spaced_columns import fix_whitespace_columns, squash_whitespace
from datasolver.data.sql_tokens import Token, significant, tokenize, unquote

MAX_SQL_CHARS = 100_000  # of a rejected query the rule transpiles (about 2 s of sqlglot; a longer one is left as it is)


def other_dialect(sql: str, columns: KnownColumns) -> list[tuple[str, list[str]]]:
    """`sql` transpiled from each dialect it shows the features of, most likely first
    (`transpile_dialect`), each followed by its double-quoted names fixed (`fix_whitespace_columns`)
    and then its date templates made to read dates (`read_dates_as_text`) where those change it."""
    if len(sql) > MAX_SQL_CHARS:
        return []
    found: list[tuple[str, list[str]]] = []
    quoted = any(t.kind == "ident" for t in tokenize(sql))
    for dialect, text in transpile_dialect(sql, columns if quoted else ()):
        said = [f"transpiled from {dialect}"]
        fixed, more = fix_whitespace_columns(text, columns)
        found += [(text, said), (fixed, said + more)]
        dated, read = read_dates_as_text(fixed)  # a template read over a column typed DATE
        if read:
            found.append((dated, said + more + read))
    return found


# Telltale features: (dialect, weight). Weight 2 = only that dialect has it, 1 = shared.
_CALL_TELLTALES: dict[str, tuple[tuple[str, int], ...]] = {
    # ISNULL(x) is MySQL's `x IS NULL`; ISNULL(x, y) T-SQL's COALESCE (see _ISNULL_BY_ARGUMENTS)
    "len": (("tsql", 1),),
    "getdate": (("tsql", 2),),
    "dateadd": (("tsql", 1),),
    "datediff": (("tsql", 1), ("mysql", 1)),
    "datepart": (("tsql", 2),),
    "charindex": (("tsql", 2),),
    "convert": (("tsql", 2),),
    "ifnull": (("mysql", 1), ("sqlite", 1)),
    "group_concat": (("mysql", 1), ("sqlite", 1)),
    "date_format": (("mysql", 2),),
    "str_to_date": (("mysql", 2),),
    "curdate": (("mysql", 2),),
    "date_sub": (("mysql", 2),),
    "julianday": (("sqlite", 2),),
    "to_char": (("postgres", 2),),
    "to_date": (("postgres", 2),),
    "to_timestamp": (("postgres", 2),),
    "to_number": (("postgres", 2),),
}
_WORD_TELLTALES: dict[str, tuple[tuple[str, int], ...]] = {
    "separator": (("mysql", 2),),
    "regexp": (("mysql", 1), ("sqlite", 1)),
}
_ISNULL_BY_ARGUMENTS = {1: (("mysql", 2),), 2: (("tsql", 2),)}
# Equal scores: sqlite first (its reader takes "…", `…` and […] as names and never eats
# backslashes), mysql last (its reader turns "…" into strings and eats backslashes).
_PREFERENCE = ("sqlite", "tsql", "mysql", "postgres")


def detect_dialects(sql: str) -> list[str]:
    """Dialects whose telltale features the SQL shows, most likely first; [] when none."""
    tokens = tokenize(sql)
    where = [j for j, t in enumerate(tokens) if t.kind not in ("ws", "comment")]
    sig = [tokens[j] for j in where]
    score = dict.fromkeys(_PREFERENCE, 0)

    def add(pairs: Iterable[tuple[str, int]]) -> None:
        for dialect, weight in pairs:
            score[dialect] += weight

    for k, tok in enumerate(sig):
        prev = sig[k - 1] if k else None
        nxt = sig[k + 1] if k + 1 < len(sig) else None
        word = tok.text.lower() if tok.kind == "word" else ""
        if tok.kind == "backtick":
            add((("mysql", 2), ("sqlite", 1)))
        elif tok.text == "[" and identifier_bracket_end(sql, tokens, where[k]) is not None:
            add((("tsql", 2), ("sqlite", 1)))
        elif word == "top" and prev is not None and prev.text.lower() in ("select", "distinct", "all"):
            add((("tsql", 3),))
        elif word == "limit" and _limit_comma(sig, k):
            add((("mysql", 1), ("sqlite", 1)))
        elif word == "strftime" and nxt is not None and nxt.text == "(" and _sqlite_strftime(sig, k):
            add((("sqlite", 2),))
        elif word == "isnull" and nxt is not None and nxt.text == "(":
            add(_ISNULL_BY_ARGUMENTS.get(_argument_count(sig, k + 1), ()))
        elif word and nxt is not None and nxt.text == "(" and word in _CALL_TELLTALES:
            add(_CALL_TELLTALES[word])
        elif word in _WORD_TELLTALES:
            add(_WORD_TELLTALES[word])
    return sorted((d for d in _PREFERENCE if score[d] > 0), key=lambda d: (-score[d], _PREFERENCE.index(d)))


def _argument_count(sig: list[Token], open_at: int) -> int:
    """How many arguments the call whose `(` is sig[open_at] has (commas at its own depth + 1; 0 for `()`)."""
    depth, count = 0, 0
    for tok in sig[open_at:]:
        if tok.text in ("(", "["):
            depth += 1
        elif tok.text in (")", "]"):
            depth -= 1
            if depth == 0:
                return count + (1 if tok is not sig[open_at + 1] else 0)
        elif tok.text == "," and depth == 1:
            count += 1
    return count + 1  # unclosed: what was written so far


def _limit_comma(sig: list[Token], k: int) -> bool:
    """MySQL/SQLite ``LIMIT offset, count``."""
    return k + 3 < len(sig) and sig[k + 1].kind == sig[k + 3].kind == "number" and sig[k + 2].text == ","


def _sqlite_strftime(sig: list[Token], k: int) -> bool:
    """SQLite's strftime takes the format first: strftime('%Y', col)."""
    first = sig[k + 2] if k + 2 < len(sig) else None
    return first is not None and first.kind == "string" and "%" in first.text


def transpile_dialect(sql: str, columns: Iterable[str] = ()) -> list[tuple[str, str]]:
    """Candidate DuckDB rewrites as (dialect, sql), most likely dialect first.

    Only dialects the SQL's telltale features point at are tried, and only single-statement
    results that differ from the input are kept. SQL holding a DuckDB list literal or
    subscript is never transpiled (other readers take ``[1]`` for a name or shift it). ``columns`` lets the MySQL reader tell a
    "…" column name from a "…" string literal.
    """
    tokens = tokenize(sql)
    if any(t.text == "[" and identifier_bracket_end(sql, tokens, j) is None for j, t in enumerate(tokens)):
        return []  # a DuckDB list or subscript: every other reader would mangle it
    # MySQL reads || as OR; whoever wrote || was not writing MySQL.
    skip_mysql = any(a.text == b.text == "|" and a.end == b.start for a, b in zip(tokens, tokens[1:]))
    candidates: list[tuple[str, str]] = []
    seen = {sql.strip().rstrip(";").strip()}
    cols = list(columns)
    for dialect in detect_dialects(sql):
        if dialect == "mysql" and skip_mysql:
            continue
        if dialect == "postgres":  # sqlglot misreads date templates (`Day` → `%uay`): our own first
            dates, _ = rewrite_pg_dates(sql)
            if dates not in seen:
                seen.add(dates)
                candidates.append((dialect, dates))
        source = _prepare_for_mysql(sql, cols) if dialect == "mysql" else sql
        import sqlglot  # ~0.3 CPU-s to import: only for SQL that names another dialect's features

        try:
            statements = sqlglot.transpile(source, read=dialect, write="duckdb")
        except Exception:  # noqa: BLE001 - any transpiler failure just means "no candidate"
            continue
        statements = [s for s in statements if s.strip()]
        if len(statements) != 1 or statements[0] in seen:
            continue
        seen.add(statements[0])
        candidates.append((dialect, statements[0]))
    return candidates


_IDENT_CONTEXT = frozenset({"from", "join", "as", "into", "update", "table"})


def _prepare_for_mysql(sql: str, columns: list[str]) -> str:
    """Make DuckDB-flavoured SQL read correctly as MySQL.

    MySQL treats backslashes in strings as escapes (so '\\d+' would lose its backslash) and
    "…" as a string. We double backslashes inside strings, and turn a "…" into a backtick
    name when it is one: it matches a real column (whitespace-insensitive), it follows
    FROM/JOIN/AS, sits next to a dot, or is defined as an alias elsewhere in the query.
    """
    tokens = tokenize(sql)
    sig = significant(tokens)
    known = {squash_whitespace(c).casefold() for c in columns}
    aliases = {
        squash_whitespace(unquote(sig[k])).casefold()
        for k in range(1, len(sig))
        if sig[k].kind == "ident" and sig[k - 1].text.lower() == "as"
    }
    position = {t.start: k for k, t in enumerate(sig)}
    out: list[str] = []
    for tok in tokens:
        if tok.kind == "string" and tok.text.startswith("'"):
            out.append(tok.text.replace("\\", "\\\\"))
        elif tok.kind == "ident":
            k = position[tok.start]
            prev = sig[k - 1].text.lower() if k else ""
            nxt = sig[k + 1].text if k + 1 < len(sig) else ""
            key = squash_whitespace(unquote(tok)).casefold()
            is_name = key in known or key in aliases or prev in _IDENT_CONTEXT or "." in (prev, nxt)
            out.append("`" + unquote(tok).replace("`", "``") + "`" if is_name else tok.text)
        else:
            out.append(tok.text)
    return "".join(out)
