"""Deterministic SQL repair at the execution boundary.

The SQL is always run as given first. Only when DuckDB rejects it do we try, in order:

1. ``[ident]`` and backtick identifiers → double-quoted (never inside strings, never ``x[1]``);
2. a column name written bare although it needs quotes (``时间(月份)``, also for the column
   ``时间（月份）`` when no column is spelled with ASCII parentheses) → double-quoted;
   a double-quoted name that matches no column but exactly one real column once all
   whitespace (full-width U+3000 included) is removed → that column;
3. a double-quoted name that is no column, no alias of the query, compared with a text column
   (``"项目名称" = "华润置地未来城市"``, ``city IN ("Paris", "Rome")``) → a string literal: a
   model wrote a value the way MySQL reads it (``quote_text_values``);
4. a sqlglot transpile from the dialect the SQL's telltale features point at
   (T-SQL, MySQL, SQLite, PostgreSQL: its date templates by `pg_dates` first), each also
   given step 2. ``ISNULL`` reads by its arguments: one is MySQL's ``x IS NULL``, two T-SQL's
   ``COALESCE``; a date template it reads with `strptime` also takes a DATE or TIMESTAMP value
   (its ISO text), since the loader types `31/12/2023` as DATE (``pg_dates.read_dates_as_text``).

Before the first run one rewrite always applies: a cast to `float`/`real` (`x::float`,
`CAST(x AS REAL)`) becomes DOUBLE (`widen_float_casts`): PostgreSQL's `float` is 8 bytes and
DuckDB's 4, so a ratio would silently lose digits although the query runs.

The first rewrite that executes wins and is reported. Nothing fuzzy: an ambiguous or
unmatched name is left alone, and when every stage fails the original error is re-raised, except
when the SQL as written did not parse and a rewrite did: then the rewrite's error (a missing column,
a wrong type), naming the rewrite, is the one raised, since it is the fault left to fix.
Everything works on tokens from a small scanner, so string literals and comments are
never rewritten.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import duckdb

from datasolver.data.errors import CellTooLarge, QueryInterrupted
from datasolver.data.names import quote_ident
from datasolver.data.pg_dates import read_dates_as_text, rewrite_pg_dates
from datasolver.data.sql_tokens import Token, significant, tokenize, unquote

T = TypeVar("T")

# --------------------------------------------------------------------------- stage 1

# Words after which `[` starts a value (list literal or T-SQL identifier), never an index.
_KEYWORDS = frozenset(
    """select from where join on and or not by as in is then else when case end distinct top
    having into values union all except intersect like ilike between using set with order
    group limit offset left right inner outer full cross natural lateral any some exists
    return asc desc nulls over partition qualify window filter""".split()
)
_NUMBER_ONLY = re.compile(r"^\s*[-+]?\d+(\.\d*)?\s*$")
_COMPREHENSION = re.compile(r"\bfor\b.*\bin\b", re.IGNORECASE | re.DOTALL)


def quote_brackets_and_backticks(sql: str) -> tuple[str, list[str]]:
    """Rewrite T-SQL ``[ident]`` and MySQL backtick identifiers as DuckDB "ident".

    A bracket is left alone when it indexes something (``x[1]``, ``f(a)[2]``, ``"c"[1]``)
    or holds what can only be a list (numbers, commas, strings, slices, comprehensions).
    """
    tokens = tokenize(sql)
    out: list[str] = []
    notes: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "backtick":
            name = unquote(tok)
            out.append(quote_ident(name))
            notes.append(f"`{name}` → {quote_ident(name)}")
        elif tok.text == "[" and (close := _identifier_bracket_end(sql, tokens, i)) is not None:
            name = sql[tok.end : tokens[close].start]
            out.append(quote_ident(name))
            notes.append(f"[{name}] → {quote_ident(name)}")
            i = close
        else:
            out.append(tok.text)
        i += 1
    return "".join(out), notes


def _identifier_bracket_end(sql: str, tokens: list[Token], i: int) -> int | None:
    """Index of the `]` closing a T-SQL identifier opened at tokens[i], else None."""
    close = next((j for j in range(i + 1, len(tokens)) if tokens[j].kind == "op" and tokens[j].text in ("[", "]")), None)
    if close is None or tokens[close].text != "]":
        return None  # unclosed or nested: a list expression, not a name
    inner = tokens[i + 1 : close]
    if any(t.kind in ("string", "ident", "backtick", "comment") for t in inner):
        return None
    body = sql[tokens[i].end : tokens[close].start]
    if not body.strip() or "," in body or ":" in body or "\n" in body:
        return None
    if _NUMBER_ONLY.match(body) or _COMPREHENSION.search(body):
        return None
    prev = next((t for t in reversed(tokens[:i]) if t.kind not in ("ws", "comment")), None)
    if prev is not None and prev.end == tokens[i].start and _indexable(prev):
        return None
    return close


def _indexable(tok: Token) -> bool:
    """Can a directly following `[` be a subscript of this token?"""
    if tok.kind in ("ident", "backtick", "string"):
        return True
    if tok.kind == "word":
        return tok.text.lower() not in _KEYWORDS
    return tok.text in (")", "]")


# --------------------------------------------------------------------------- stage 2

_INVISIBLE = {0x200B: None, 0xFEFF: None}  # zero-width space and BOM count as whitespace too


def squash_whitespace(name: str) -> str:
    """Name with every whitespace character removed (str.split covers U+3000 and NBSP)."""
    return "".join(name.translate(_INVISIBLE).split())


def fix_whitespace_columns(sql: str, columns: Iterable[str]) -> tuple[str, list[str]]:
    """Rewrite each double-quoted name that matches no column to the one real column it
    equals once all whitespace is removed; ambiguous or unmatched names stay as they are.
    Matching ignores case only because DuckDB identifiers do."""
    tokens = tokenize(sql)
    if not any(t.kind == "ident" for t in tokens):
        return sql, []
    real = sorted(set(columns))
    exact = {c.casefold() for c in real}
    by_key: dict[str, set[str]] = {}
    for col in real:
        by_key.setdefault(squash_whitespace(col).casefold(), set()).add(col)
    out: list[str] = []
    notes: list[str] = []
    for tok in tokens:
        if tok.kind == "ident":
            name = unquote(tok)
            hits = by_key.get(squash_whitespace(name).casefold(), set())
            if name.casefold() not in exact and len(hits) == 1:
                col = next(iter(hits))
                out.append(quote_ident(col))
                notes.append(f"column {quote_ident(name)} → {quote_ident(col)}")
                continue
        out.append(tok.text)
    return "".join(out), notes


def quote_bare_columns(sql: str, columns: Iterable[str]) -> tuple[str, list[str]]:
    """Double-quote each column name written bare although it holds characters a bare name
    cannot (``时间(月份)`` reads as a call of 时间, ``建筑密度(%)`` as an operator): a small model
    writes them as the schema shows them. Only names with such characters, only outside strings,
    comments and quoted names, and never inside a longer word."""
    real = set(columns)
    # A name as written → the column: itself, or its NFKC form (the schema's full-width
    # `时间（月份）` typed with ASCII parentheses) when no column is spelled that way.
    spelled: dict[str, str] = {}
    for column in sorted(real):
        if _NEEDS_QUOTES.search(column):
            spelled.setdefault(column, column)
            folded = unicodedata.normalize("NFKC", column)
            if folded not in real and _NEEDS_QUOTES.search(folded):
                spelled.setdefault(folded, column)
    if not spelled:
        return sql, []
    special = sorted(spelled, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w\"])(" + "|".join(map(re.escape, special)) + r")(?![\w\"])")
    out: list[str] = []
    code: list[str] = []  # a run of tokens outside strings, comments and quoted names
    notes: list[str] = []

    def flush() -> None:
        text = "".join(code)
        for name in dict.fromkeys(pattern.findall(text)):
            notes.append(f"column {name} → {quote_ident(spelled[name])}")
        out.append(pattern.sub(lambda m: quote_ident(spelled[m.group(1)]), text))
        code.clear()

    for tok in tokenize(sql):
        if tok.kind in ("string", "comment", "ident", "backtick"):
            flush()
            out.append(tok.text)
        else:
            code.append(tok.text)
    flush()
    return "".join(out), notes


_NEEDS_QUOTES = re.compile(r"[^\w]")


# --------------------------------------------------------------------------- double-quoted values

_COMPARISONS = frozenset({"=", "==", "!=", "<>", "like", "ilike", "not like", "not ilike"})


def quote_text_values(sql: str, columns: Iterable[str], text_columns: Iterable[str]) -> tuple[str, list[str]]:
    """Rewrite each double-quoted name that is a value, not a name, as a string literal.

    Only where nothing else can be meant: the name is no column (case and whitespace aside) and no
    alias the query defines, it is not qualified (`t."x"`) and it is compared (`=`, `<>`, `!=`,
    LIKE, ILIKE, an IN list) with a column that is text. A query where the double-quoted name
    is a column is never changed."""
    tokens = tokenize(sql)
    if not any(t.kind == "ident" for t in tokens):
        return sql, []
    sig = significant(tokens)
    known = {squash_whitespace(c).casefold() for c in columns}
    text = {squash_whitespace(c).casefold() for c in text_columns}
    aliases = {squash_whitespace(unquote(sig[k])).casefold() for k in range(1, len(sig))
               if sig[k].kind == "ident" and sig[k - 1].text.lower() == "as"}
    values: set[int] = set()
    for k, tok in enumerate(sig):
        if tok.kind != "ident":
            continue
        key = squash_whitespace(unquote(tok)).casefold()
        if key in known or key in aliases or _qualified(sig, k):
            continue
        other = compared_column(sig, k)
        if other is not None and squash_whitespace(other).casefold() in text:
            values.add(tok.start)
    if not values:
        return sql, []
    out, notes = [], []
    for tok in tokens:
        if tok.start in values:
            literal = "'" + unquote(tok).replace("'", "''") + "'"
            out.append(literal)
            notes.append(f"{tok.text} → {literal} (a text value: no column has that name)")
        else:
            out.append(tok.text)
    return "".join(out), notes


def _qualified(sig: list[Token], k: int) -> bool:
    return (k > 0 and sig[k - 1].text == ".") or (k + 1 < len(sig) and sig[k + 1].text == ".")


def _column_at(sig: list[Token], k: int) -> str | None:
    """The column named by the token at k (the last part of `t.col`), None when it is no name."""
    if not 0 <= k < len(sig):
        return None
    tok = sig[k]
    if tok.kind == "ident" or tok.kind == "backtick":
        return unquote(tok)
    if tok.kind == "word" and tok.text.lower() not in _KEYWORDS:
        return tok.text
    return None


def _comparison_at(sig: list[Token], start: int, end: int) -> bool:
    """Whether sig[start:end] spells a comparison: `=`, `<>`, `!=` (adjacent symbols), LIKE, NOT ILIKE …"""
    if start < 0 or end > len(sig) or start >= end:
        return False
    parts = sig[start:end]
    if parts[0].kind == "op":
        if any(p.kind != "op" or p.end != q.start for p, q in zip(parts, parts[1:])):
            return False
        return "".join(p.text for p in parts) in _COMPARISONS
    return " ".join(p.text.lower() for p in parts) in _COMPARISONS


def compared_column(sig: list[Token], k: int) -> str | None:
    """The column the value at sig[k] is compared with: `col = v`, `v = col`, `col [NOT] IN (…, v, …)`."""
    for size in (2, 1):
        if _comparison_at(sig, k - size, k) and (column := _column_at(sig, k - size - 1)) is not None:
            return column
    for size in (2, 1):
        after = k + 1 + size
        if _comparison_at(sig, k + 1, after) and (column := _column_at(sig, after)) is not None \
                and not (after + 1 < len(sig) and sig[after + 1].text in (".", "(")):
            return column
    j = k - 1
    while j >= 0 and (sig[j].kind in ("ident", "string", "number") or sig[j].text == ","):
        j -= 1
    if j >= 1 and sig[j].text == "(" and sig[j - 1].text.lower() == "in":
        return _column_at(sig, j - 2 - (1 if j >= 2 and sig[j - 2].text.lower() == "not" else 0))
    return None


# --------------------------------------------------------------------------- stage 3

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
        elif tok.text == "[" and _identifier_bracket_end(sql, tokens, where[k]) is not None:
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
    if any(t.text == "[" and _identifier_bracket_end(sql, tokens, j) is None for j, t in enumerate(tokens)):
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


# --------------------------------------------------------------------------- float casts

_NARROW_FLOATS = frozenset({"float", "real", "float4"})
_CAST_CALLS = frozenset({"cast", "try_cast"})


def widen_float_casts(sql: str) -> tuple[str, list[str]]:
    """`x::float`, `x::real`, `CAST(x AS FLOAT)` (and TRY_CAST, float4) as DOUBLE, and a note;
    a name or a string that reads `float` is left alone."""
    tokens = tokenize(sql)
    sig = [k for k, t in enumerate(tokens) if t.kind not in ("ws", "comment")]
    calls: list[str] = []  # the word before each open parenthesis, innermost last
    widened: list[str] = []
    out = [t.text for t in tokens]
    for n, k in enumerate(sig):
        tok = tokens[k]
        prev = tokens[sig[n - 1]] if n else None
        if tok.text == "(":
            calls.append(prev.text.lower() if prev is not None and prev.kind == "word" else "")
        elif tok.text == ")" and calls:
            calls.pop()
        elif tok.kind == "word" and tok.text.lower() in _NARROW_FLOATS and prev is not None:
            before = tokens[sig[n - 2]] if n > 1 else None
            cast = prev.text == ":" and before is not None and before.text == ":" and before.end == prev.start
            in_cast = prev.text.lower() == "as" and bool(calls) and calls[-1] in _CAST_CALLS
            if cast or in_cast:
                out[k] = "DOUBLE"
                widened.append(tok.text)
    if not widened:
        return sql, []
    kinds = ", ".join(dict.fromkeys(w.lower() for w in widened))
    return "".join(out), [f"cast to {kinds} widened to DOUBLE (PostgreSQL's float is 8 bytes, DuckDB's 4)"]


# --------------------------------------------------------------------------- driver


@dataclass
class RepairOutcome(Generic[T]):
    """What the SQL that finally worked returned, that SQL, and the rewrites that made it."""

    value: T
    sql: str
    rewrites: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RepairAttempt:
    """One rewrite that was tried and failed; attached to the re-raised original error."""

    sql: str
    rewrites: tuple[str, ...]
    error: str


_FENCE_LINE = re.compile(r"^\s*```")


def unwrap_statement(sql: str) -> tuple[str, list[str]]:
    """The statement inside what a model wrote, and notes on what was taken away.

    A Markdown code fence (```sql … ```, with or without prose around it) is reduced to the code
    inside its first block; trailing semicolons and the comments and blank space around them are
    dropped, because DuckDB then reads the query as a second, empty statement, and a comment at
    the end would swallow the parenthesis of any query wrapped around it (counting rows). Comments
    inside the statement stay. Never fails: text with nothing to remove comes back unchanged.
    """
    notes: list[str] = []
    lines = sql.splitlines()
    opening = next((k for k, line in enumerate(lines) if _FENCE_LINE.match(line)), None)
    if opening is not None:
        closing = next((k for k in range(opening + 1, len(lines)) if _FENCE_LINE.match(lines[k])), len(lines))
        inside = "\n".join(lines[opening + 1:closing])
        if inside.strip():
            sql = inside
            notes.append("removed the Markdown code fence around the SQL")
    tokens = tokenize(sql)
    end = len(tokens)
    while end and (tokens[end - 1].kind in ("ws", "comment") or tokens[end - 1].text == ";"):
        end -= 1
    tail = tokens[end:]
    if any(t.kind == "comment" for t in tail):
        notes.append("removed the comment after the end of the statement")
    if tail:
        sql = sql[: tokens[end - 1].end] if end else ""
    return sql.strip(), notes


# Failures a rewrite cannot fix; retrying would only repeat a timeout or an OOM.
_NOT_REPAIRABLE: tuple[type[BaseException], ...] = (
    duckdb.InterruptException, duckdb.OutOfMemoryException, QueryInterrupted, CellTooLarge,
)


def execute_with_repair(
    sql: str, run: Callable[[str], T], columns: Callable[[], Iterable[str]],
    text_columns: Callable[[], Iterable[str]] = lambda: (),
) -> RepairOutcome[T]:
    """Run ``sql``; if it fails, try the deterministic rewrites in order and return the first
    that executes. If none does, re-raise the original error with ``repair_attempts``
    (a list of RepairAttempt) attached.

    Args:
        sql: the SQL as the caller wrote it.
        run: executes SQL and raises on failure.
        columns: all real column names; called at most once, and only if a stage needs it.
        text_columns: the names of the text (VARCHAR) columns among them; called at most once, only
            for a query with a double-quoted name that no column has.
    """
    try:
        return RepairOutcome(run(sql), sql, [])
    except Exception as exc:  # noqa: BLE001 - run may raise anything; we re-raise it below
        original = exc
    if isinstance(original, _NOT_REPAIRABLE):
        raise original

    known: list[str] | None = None

    def cols() -> list[str]:
        nonlocal known
        if known is None:
            known = list(columns())
        return known

    def has_quoted(text: str) -> bool:
        return any(t.kind == "ident" for t in tokenize(text))

    def candidates() -> Iterable[tuple[str, list[str]]]:
        quoted, notes = quote_brackets_and_backticks(sql)
        yield quoted, notes
        bare, more = quote_bare_columns(quoted, cols())
        if more:
            yield bare, notes + more
        if has_quoted(quoted):
            fixed, more = fix_whitespace_columns(quoted, cols())
            yield fixed, notes + more
            valued, values = quote_text_values(fixed, cols(), text_columns())
            if values:
                yield valued, notes + more + values
        for dialect, text in transpile_dialect(sql, cols() if has_quoted(sql) else ()):
            yield text, [f"transpiled from {dialect}"]
            more = []
            if has_quoted(text):
                text, more = fix_whitespace_columns(text, cols())
                yield text, [f"transpiled from {dialect}", *more]
            dated, read = read_dates_as_text(text)  # a template read over a column typed DATE
            if read:
                yield dated, [f"transpiled from {dialect}", *more, *read]

    attempts: list[RepairAttempt] = []
    further: Exception | None = None  # the first rewrite's error past the parser, when the SQL did not parse
    tried = {sql}
    for candidate, notes in candidates():
        if candidate in tried:
            continue
        tried.add(candidate)
        try:
            return RepairOutcome(run(candidate), candidate, notes)
        except Exception as exc:  # noqa: BLE001 - a failed rewrite is recorded, not raised
            attempts.append(RepairAttempt(candidate, tuple(notes), _first_line(exc)))
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
