"""A small syntax highlighter for Python and SQL: text in, escaped HTML with <span class> out.

Tokens are found by one regular expression per language (comments, strings, numbers, words,
anything else); keywords get class `k`, strings `s`, numbers `n`, comments `c`, builtins `b`.
Every piece of text goes through html.escape, so code can never inject markup.
"""

from __future__ import annotations

import html
import re

_PY_KEYWORDS = frozenset(
    "False None True and as assert async await break class continue def del elif else except finally "
    "for from global if import in is lambda nonlocal not or pass raise return try while with yield match case".split())
_PY_BUILTINS = frozenset("print len range str int float list dict set tuple open sorted sum min max any all "
                         "isinstance enumerate zip map filter round abs run_sql".split())
_SQL_KEYWORDS = frozenset(
    "select from where group by order having limit offset join inner left right full outer cross on using as "
    "and or not in is null like ilike between case when then else end distinct union all intersect except "
    "with recursive asc desc nulls first last over partition window rows range insert update delete into "
    "values create table view drop cast true false exists any qualify filter interval date timestamp".split())
_SQL_FUNCTIONS = frozenset(
    "count sum avg min max round coalesce nullif strftime extract date_trunc lower upper trim length substr "
    "substring concat abs row_number rank dense_rank lag lead string_agg list first last median epoch".split())

_PY_TOKENS = re.compile(r"""
    (?P<c>\#[^\n]*)
  | (?P<s>[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?(?:\"\"\"|$)|'''[\s\S]*?(?:'''|$)|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?))
  | (?P<n>\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b)
  | (?P<w>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<o>[\s\S])
""", re.VERBOSE)
_SQL_TOKENS = re.compile(r"""
    (?P<c>--[^\n]*|/\*[\s\S]*?(?:\*/|$))
  | (?P<s>'(?:''|[^'])*'?)
  | (?P<q>"(?:""|[^"])*"?|`[^`]*`?)
  | (?P<n>\b\d+(?:\.\d+)?\b)
  | (?P<w>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<o>[\s\S])
""", re.VERBOSE)


def highlight_python(code: str) -> str:
    """Escaped HTML of Python source with token spans."""
    return _render(_PY_TOKENS, code, lambda w: "k" if w in _PY_KEYWORDS else "b" if w in _PY_BUILTINS else None)


def highlight_sql(sql: str) -> str:
    """Escaped HTML of SQL with token spans (keywords case-insensitive; quoted names as `q`)."""
    def word(w: str) -> str | None:
        low = w.lower()
        return "k" if low in _SQL_KEYWORDS else "b" if low in _SQL_FUNCTIONS else None

    return _render(_SQL_TOKENS, sql, word)


def _render(pattern: re.Pattern[str], text: str, classify_word) -> str:
    out: list[str] = []
    plain: list[str] = []

    def flush() -> None:
        if plain:
            out.append(html.escape("".join(plain), quote=False))
            plain.clear()

    for match in pattern.finditer(text):
        kind, value = match.lastgroup, match.group()
        css = classify_word(value) if kind == "w" else None if kind == "o" else kind
        if css is None:
            plain.append(value)
            continue
        flush()
        out.append(f'<span class="{css}">{html.escape(value, quote=False)}</span>')
    flush()
    return "".join(out)


_SQL_IN_PYTHON = re.compile(r"run_sql\(\s*[rRfF]?(\"\"\"|''')([\s\S]*?)\1")


def sql_in_solver(code: str) -> list[str]:
    """The SQL strings solver.py passes to run_sql (triple-quoted), in order."""
    code = "\n".join("" if line.lstrip().startswith("#") else line for line in code.splitlines())
    return [m.group(2).strip() for m in _SQL_IN_PYTHON.finditer(code) if m.group(2).strip()]
