"""PostgreSQL's date formatting (`to_char`, `to_date`, `to_timestamp` with a template) as DuckDB.

DuckDB has none of the three with a template; sqlglot translates the simple template patterns but
turns `Day` into `%uay`, leaves `Mon`, `Month`, `Q` and `FM` as text. Here each template pattern
becomes its strftime/strptime code, and what strftime has no code for is computed:

- `to_char(x, 'YYYY-MM')` → `strftime(x, '%Y-%m')`; `Q` → `quarter(x)`, `D` (Sunday = 1) →
  `dayofweek(x) + 1`, `WW` → the week counted from 1 January, joined with `||`;
- `Month`/`Day` are padded to 9 characters as PostgreSQL does, unless `FM` comes first; `MONTH`,
  `month`, `MON`, `DY`… set the case; `FM` also drops leading zeros (`FMDD` → `%-d`);
- `to_date(s, 'DD/MM/YYYY')` → `CAST(strptime(s, '%d/%m/%Y') AS DATE)`, `to_timestamp(s, fmt)` →
  `strptime(s, fmt)`; a template with a pattern that cannot be parsed (`Q`, `WW`) is left alone.

`"text"` in a template is literal; any other character is copied. A call whose template is not a
string literal, or is a number template (`999.99`), is left alone.

A value read with a text template may already be a date: the loader types `05/03/2024` as DATE
where the column settles the order. `read_dates_as_text` makes each `strptime(x, 'fmt')` (written
by the rewrites above or by the transpiler) take either: `x` as text, read with its template or as
the ISO text DuckDB gives a DATE or a TIMESTAMP.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from datasolver.data.names import quote_literal
from datasolver.data.sql_tokens import Token, tokenize

FUNCTIONS = ("to_char", "to_date", "to_timestamp")

# pattern -> (strftime code, or None when computed, FM code)
_CODES: dict[str, tuple[str | None, str]] = {
    "HH24": ("%H", "%-H"), "HH12": ("%I", "%-I"), "HH": ("%I", "%-I"), "MI": ("%M", "%-M"),
    "SS": ("%S", "%-S"), "MS": ("%g", "%g"), "US": ("%f", "%f"), "AM": ("%p", "%p"), "PM": ("%p", "%p"),
    "IYYY": ("%G", "%G"), "YYYY": ("%Y", "%Y"), "YY": ("%y", "%-y"), "MONTH": ("%B", "%B"),
    "MON": ("%b", "%b"), "MM": ("%m", "%-m"), "DAY": ("%A", "%A"), "DY": ("%a", "%a"),
    "DDD": ("%j", "%-j"), "DD": ("%d", "%-d"), "ID": ("%u", "%u"), "IW": ("%V", "%-V"),
    "TZ": ("%Z", "%Z"), "Q": (None, ""), "WW": (None, ""), "D": (None, ""),
}
_ORDER = sorted(_CODES, key=len, reverse=True)  # longest first: YYYY before YY, DDD before DD
_COMPUTED = {"Q": "CAST(quarter({x}) AS VARCHAR)", "D": "CAST(dayofweek({x}) + 1 AS VARCHAR)",
             "WW": "lpad(CAST((dayofyear({x}) - 1) // 7 + 1 AS VARCHAR), 2, '0')"}
_NAMES = {"MONTH", "DAY", "MON", "DY", "AM", "PM"}  # their case follows the pattern's
_PADDED = {"MONTH", "DAY"}  # blank-padded to 9 characters without FM


def rewrite_pg_dates(sql: str) -> tuple[str, list[str]]:
    """`sql` with every PostgreSQL `to_char`/`to_date`/`to_timestamp` call that has a date template
    rewritten (see the module docstring), and one note per rewritten function name."""
    def rewrite(name: str, args: list[list[Token]]) -> str | None:
        template = _template(args[1]) if len(args) == 2 else None
        if template is None:
            return None
        value, _ = rewrite_pg_dates("".join(t.text for t in args[0]).strip())
        return _rewrite(name.lower(), value, template)

    text, done = _rewrite_calls(sql, FUNCTIONS, rewrite)
    return text, [f"PostgreSQL {n}(…, template) → strftime/strptime" for n in dict.fromkeys(done)]


def _rewrite_calls(sql: str, names: Collection[str],
                   rewrite: Callable[[str, list[list[Token]]], str | None]) -> tuple[str, list[str]]:
    """`sql` with each call of a function in `names` (lower case) that `rewrite(name as written, argument
    tokens)` gives text for replaced by that text; the lower-case names of the calls replaced, in order."""
    tokens = tokenize(sql)
    out: list[str] = []
    done: list[str] = []
    i = 0
    while i < len(tokens):
        name = tokens[i].text.lower() if tokens[i].kind == "word" else ""
        call = _call(tokens, i) if name in names else None
        if call is not None:
            args, end = call
            rewritten = rewrite(tokens[i].text, args)
            if rewritten is not None:
                out.append(rewritten)
                done.append(name)
                i = end + 1
                continue
        out.append(tokens[i].text)
        i += 1
    return "".join(out), done


# strptime codes of a date's day, month and year; the ISO text DuckDB writes a DATE or TIMESTAMP as.
_DAY, _MONTH, _YEAR = ("%d", "%-d", "%e"), ("%m", "%-m", "%b", "%B"), ("%Y",)
_DATE_CODE = re.compile(r"%-?[a-zA-Z]")
_ISO_DATE = "%Y-%m-%d"
_ISO_TIMESTAMPS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f")
_PARSERS = ("strptime", "try_strptime")


def read_dates_as_text(sql: str) -> tuple[str, list[str]]:
    """`sql` with each `strptime(x, 'fmt')` (and try_strptime) whose template reads a day, a month and
    a year as `strptime(CAST(x AS VARCHAR), ['fmt', <fmt with its date as ISO>, <ISO timestamps>])`,
    and a note: `x` may be a DATE or TIMESTAMP column (strptime takes text only) whose text is ISO."""
    def rewrite(name: str, args: list[list[Token]]) -> str | None:
        template = _template(args[1]) if len(args) == 2 else None
        formats = _iso_alternatives(template) if template is not None else None
        if formats is None:
            return None
        value = "".join(t.text for t in args[0]).strip()
        return f"{name}(CAST({value} AS VARCHAR), [{', '.join(quote_literal(f) for f in formats)}])"

    text, done = _rewrite_calls(sql, _PARSERS, rewrite)
    return text, ["a date read from text also read as a DATE or TIMESTAMP's ISO text"] if done else []


def _iso_alternatives(template: str) -> list[str] | None:
    """The template, it with its day, month and year (with what stands between them) as ISO, and
    ISO's timestamps; None unless the template reads all three and nothing else between them."""
    codes = list(_DATE_CODE.finditer(template))
    dated = [m for m in codes if m.group() in _DAY + _MONTH + _YEAR]
    if not (any(m.group() in _DAY for m in dated) and any(m.group() in _MONTH for m in dated)
            and any(m.group() in _YEAR for m in dated)) or len(dated) != 3:
        return None
    start, end = dated[0].start(), dated[-1].end()
    if any(start < m.start() < end and m not in dated for m in codes):
        return None  # a time or weekday between the date's parts: no ISO spelling of it
    iso = template[:start] + _ISO_DATE + template[end:]
    return list(dict.fromkeys([template, iso, _ISO_DATE, *_ISO_TIMESTAMPS]))


def _call(tokens: list[Token], i: int) -> tuple[list[list[Token]], int] | None:
    """The argument tokens of the call whose name is tokens[i], and the index of its `)`."""
    j = i + 1
    while j < len(tokens) and tokens[j].kind in ("ws", "comment"):
        j += 1
    if j >= len(tokens) or tokens[j].text != "(":
        return None
    args: list[list[Token]] = [[]]
    depth = 0
    for k in range(j + 1, len(tokens)):
        text = tokens[k].text
        if text == "(":
            depth += 1
        elif text == ")":
            if depth == 0:
                return args, k
            depth -= 1
        elif text == "," and depth == 0:
            args.append([])
            continue
        args[-1].append(tokens[k])
    return None


def _template(arg: list[Token]) -> str | None:
    significant = [t for t in arg if t.kind not in ("ws", "comment")]
    if len(significant) != 1 or significant[0].kind != "string" or not significant[0].text.startswith("'"):
        return None
    return significant[0].text[1:-1].replace("''", "'")


def _rewrite(name: str, value: str, template: str) -> str | None:
    parts = _parts(template)
    if parts is None or not any(kind == "pattern" for kind, _, _ in parts):
        return None  # a number template, or nothing to format
    if name == "to_char":
        return _format(value, parts)
    codes = []
    for kind, text, fill in parts:
        if kind == "text":
            codes.append(text.replace("%", "%%"))
        elif _CODES[text.upper()][0] is None:
            return None  # strptime cannot read a quarter or a week number
        else:
            codes.append(_CODES[text.upper()][0])
    parsed = f"strptime({value}, {quote_literal(''.join(codes))})"
    return f"CAST({parsed} AS DATE)" if name == "to_date" else parsed


def _parts(template: str) -> list[tuple[str, str, bool]] | None:
    """The template as ("text", literal, False) and ("pattern", as written, fill mode) parts;
    None for a number template (digits 9/0 before any date pattern)."""
    parts: list[tuple[str, str, bool]] = []
    i, fill = 0, False
    while i < len(template):
        if template[i] == '"':
            close = template.find('"', i + 1)
            close = len(template) if close < 0 else close
            parts.append(("text", template[i + 1:close], False))
            i = close + 1
            continue
        if template[i:i + 2].upper() == "FM":
            fill, i = True, i + 2
            continue
        pattern = next((p for p in _ORDER if template[i:i + len(p)].upper() == p), None)
        if pattern is None:
            if template[i] in "09" and not any(kind == "pattern" for kind, _, _ in parts):
                return None
            parts.append(("text", template[i], False))
            i += 1
            continue
        parts.append(("pattern", template[i:i + len(pattern)], fill))
        fill, i = False, i + len(pattern)
    return parts


def _format(value: str, parts: list[tuple[str, str, bool]]) -> str:
    """to_char: runs of strftime codes as one strftime, computed patterns joined with `||`."""
    pieces: list[str] = []
    codes: list[str] = []

    def flush() -> None:
        if codes:
            pieces.append(f"strftime({value}, {quote_literal(''.join(codes))})")
            codes.clear()

    for kind, text, fill in parts:
        upper = text.upper()
        if kind == "text":
            codes.append(text.replace("%", "%%"))
        elif upper in _COMPUTED:
            flush()
            pieces.append(_COMPUTED[upper].format(x=value))
        elif upper in _NAMES:
            flush()
            code = f"strftime({value}, '{_CODES[upper][0]}')"
            if upper in _PADDED and not fill:
                code = f"rpad({code}, 9, ' ')"
            case = "upper" if text.isupper() else "lower" if text.islower() else None
            pieces.append(f"{case}({code})" if case else code)
        else:
            codes.append(_CODES[upper][1 if fill else 0])
    flush()
    return pieces[0] if len(pieces) == 1 else "(" + " || ".join(pieces) + ")"
