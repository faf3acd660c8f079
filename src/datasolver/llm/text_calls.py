"""Tool calls written as text, and the history sent back in a form text-calling servers accept.

Servers without a tool-call parser (llama.cpp without ``--jinja``, vLLM without
``--tool-call-parser``, some Ollama templates) return the model's calls inside ``content``.
These forms are read:

- Hermes/Qwen ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` and its XML body
  ``<tool_call><function=NAME><parameter=KEY>value</parameter></function></tool_call>``
- Mistral ``[TOOL_CALLS][{"name": …, "arguments": {…}}, …]`` and ``[TOOL_CALLS]NAME[ARGS]{…}``
- ``functions.NAME:`` (or ``functions.NAME``) followed by a JSON object of arguments
- a fenced ```json block, or bare JSON, holding an object (or a list of objects) with ``name`` and
  ``arguments`` or ``parameters``
- a known tool's bare name at the start of a line followed by its arguments object
  (``explore_data {"query": "…"}``): what a small model wrote after being shown such calls to copy;
  read only with ``tool_names``, so prose that happens to hold braces is not a call

Arguments stay raw text: ``parse_tool_arguments`` repairs and validates them later, exactly as for
native calls. A ``<tool_call>`` block whose name cannot be read becomes a call with an empty name,
so the model is told its call was unreadable instead of its turn counting as an answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from .messages import ToolCall

ID_PREFIX = "textcall_"
VIA_TEXT = "text"

FORM_HERMES = "hermes"
FORM_MISTRAL = "mistral"
FORM_FUNCTIONS = "functions"
FORM_JSON = "json"
FORM_BARE = "bare"

_HERMES_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_XML_FUNCTION = re.compile(r"<function=([^>\s]+)\s*>", re.DOTALL)
_XML_PARAMETER = re.compile(r"<parameter=([^>\s]+)\s*>\n?(.*?)\n?</parameter>", re.DOTALL)
_JSON_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_MISTRAL = "[TOOL_CALLS]"
_MISTRAL_NAMED = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*\[ARGS\]")
_FUNCTIONS = re.compile(r"functions\.([A-Za-z_][\w-]*)\s*:?\s*(?:\n?```(?:json)?\s*)?(?=[{(])")
_FENCE = re.compile(r"```[ \t]*([\w-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_ARG_KEYS = ("arguments", "parameters")
# A small model sometimes writes the last tool result again, in the tags the chat template gives
# results; the calls that result suggests are its text, not the model's calls.
VIA_WRITTEN = "written"
"""The `via` of a call a loop made for the model from the query its reply wrote (see `written_query`)."""
_ECHOED_RESULT = re.compile(r"<tool_response>.*?(?:</tool_response>|\Z)", re.DOTALL)


@dataclass
class TextCalls:
    """The calls found in one reply's content, the content without them, and the form read."""

    content: str
    calls: list[ToolCall] = field(default_factory=list)
    form: str | None = None


def parse_text_tool_calls(
    content: str, *, id_prefix: str = ID_PREFIX, tool_names: Collection[str] | None = None
) -> TextCalls:
    """Find tool calls written as text. Ids are ``<id_prefix><n>`` from 1, in order.

    ``tool_names`` (when given) must contain the name of a call found in an unmarked fenced or bare
    JSON object; the explicit markers (``<tool_call>``, ``[TOOL_CALLS]``, ``functions.``) are read
    whatever the name, so a misspelt tool gets the "unknown tool" answer rather than none.
    """
    if not content or not content.strip():
        return TextCalls(content or "")
    if _ECHOED_RESULT.search(content):
        found = parse_text_tool_calls(without_echoed_results(content), id_prefix=id_prefix, tool_names=tool_names)
        return found if found.calls else TextCalls(content)
    for form, reader in ((FORM_HERMES, _read_hermes), (FORM_MISTRAL, _read_mistral),
                         (FORM_FUNCTIONS, _read_functions)):
        found = reader(content)
        if found is not None:
            rest, raw = found
            return TextCalls(rest, _numbered(raw, id_prefix), form)
    found = _read_json(content, tool_names)
    if found is not None:
        rest, raw = found
        return TextCalls(rest, _numbered(raw, id_prefix), FORM_JSON)
    found = _read_bare(content, tool_names)
    if found is not None:
        rest, raw = found
        return TextCalls(rest, _numbered(raw, id_prefix), FORM_BARE)
    return TextCalls(content)


def without_echoed_results(content: str) -> str:
    """``content`` without the tool results the model wrote again (``<tool_response>`` blocks)."""
    return _ECHOED_RESULT.sub("", content)


def is_text_call(call_id: str | None) -> bool:
    """Whether a tool-call id was given by ``parse_text_tool_calls`` (not by the server)."""
    return bool(call_id) and str(call_id).startswith(ID_PREFIX)


# -- the forms -----------------------------------------------------------------------------------


def _read_hermes(content: str) -> tuple[str, list[tuple[str, str]]] | None:
    if "<tool_call>" not in content:
        return None
    calls = [_hermes_body(m.group(1).strip()) for m in _HERMES_BLOCK.finditer(content)]
    return _HERMES_BLOCK.sub("", content).strip(), calls


def _hermes_body(body: str) -> tuple[str, str]:
    function = _XML_FUNCTION.search(body)
    if function:
        params = {name: value for name, value in _XML_PARAMETER.findall(body)}
        # Values are text; pydantic's lax mode turns "5" / "true" into int / bool as needed.
        return function.group(1), json.dumps(params, ensure_ascii=False)
    body = _unfence(body)
    call = _call_of(_loads(body))
    if call is not None:
        return call
    # Broken JSON: take the name by pattern and leave the whole block to argument repair, which
    # unwraps a leaked {"name": …, "arguments": …} object.
    name = _JSON_NAME.search(body)
    return (name.group(1) if name else ""), body


def _read_mistral(content: str) -> tuple[str, list[tuple[str, str]]] | None:
    at = content.find(_MISTRAL)
    if at < 0:
        return None
    before, after = content[:at].strip(), content[at + len(_MISTRAL):]
    named = _MISTRAL_NAMED.match(after)
    calls: list[tuple[str, str]] = []
    if named:  # [TOOL_CALLS]name[ARGS]{…}[TOOL_CALLS]name2[ARGS]{…}
        for part in after.split(_MISTRAL):
            m = _MISTRAL_NAMED.match(part)
            if m:
                calls.append((m.group(1), part[m.end():].strip()))
        return before, calls
    value, end = _decode_at(after, _first_bracket(after))
    items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    calls = [c for c in (_call_of(item) for item in items) if c is not None]
    if not calls:
        return before, [("", after.strip())]  # unreadable: the model is told so
    return (before + " " + after[end:].strip()).strip(), calls


def _read_functions(content: str) -> tuple[str, list[tuple[str, str]]] | None:
    matches = list(_FUNCTIONS.finditer(content))
    if not matches:
        return None
    calls: list[tuple[str, str]] = []
    kept: list[str] = []
    cursor = 0
    for m in matches:
        start = m.end()
        if content[start] == "(":  # functions.NAME({...})
            start += 1
        value, end = _decode_at(content, start)
        raw = json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else content[start:end or None]
        calls.append((m.group(1), raw))
        kept.append(content[cursor:m.start()])
        cursor = end if end else len(content)
        cursor = _skip_closers(content, cursor)
    kept.append(content[cursor:])
    return "".join(kept).strip(), calls


def _read_json(
    content: str, tool_names: Collection[str] | None
) -> tuple[str, list[tuple[str, str]]] | None:
    for fence in _FENCE.finditer(content):
        if fence.group(1).lower() not in ("", "json", "tool_call", "tool_code", "javascript"):
            continue
        calls = _calls_in(_loads(fence.group(2).strip()), tool_names)
        if calls:
            rest = (content[:fence.start()] + content[fence.end():]).strip()
            return rest, calls
    stripped = content.strip()
    if stripped[:1] in "{[":
        value, end = _decode_at(stripped, 0)
        calls = _calls_in(value, tool_names)
        if calls:
            return stripped[end:].strip(), calls
    # A JSON object after some prose ("I'll look at the tables: {...}").
    for m in re.finditer(r"\{\s*\"(?:name|function)\"", content):
        value, end = _decode_at(content, m.start())
        calls = _calls_in(value, tool_names)
        if calls:
            return (content[:m.start()] + content[end:]).strip(), calls
    return None


def _read_bare(
    content: str, tool_names: Collection[str] | None
) -> tuple[str, list[tuple[str, str]]] | None:
    if not tool_names:
        return None
    names = "|".join(re.escape(n) for n in sorted(tool_names, key=len, reverse=True))
    calls: list[tuple[str, str]] = []
    kept: list[str] = []
    cursor = 0
    # A line that starts (after list marks or quotes) with a tool's name and then its argument object.
    for m in re.finditer(rf"(?m)^[ \t>*`-]*({names})`?[ \t]*:?[ \t]*(?=\{{)", content):
        if m.start() < cursor:
            continue
        value, end = _decode_at(content, m.end())
        if not isinstance(value, dict):
            continue
        calls.append((m.group(1), json.dumps(value, ensure_ascii=False)))
        kept.append(content[cursor:m.start()])
        cursor = end
    if not calls:
        return None
    kept.append(content[cursor:])
    return "".join(kept).strip(), calls


# -- helpers -------------------------------------------------------------------------------------


def _calls_in(value: Any, tool_names: Collection[str] | None) -> list[tuple[str, str]]:
    items = value if isinstance(value, list) else [value]
    calls = [_call_of(item) for item in items]
    if not calls or any(c is None for c in calls):
        return []
    found = [c for c in calls if c is not None]
    if tool_names is not None and any(name not in tool_names for name, _ in found):
        return []
    return found


def _call_of(value: Any) -> tuple[str, str] | None:
    """(name, raw arguments) of a ``{"name", "arguments"|"parameters"}`` object, else None."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):  # {"type": "function", "function": {...}}
        value = value["function"]
    name = value.get("name")
    if not isinstance(name, str) or not name:
        return None
    args = next((value[k] for k in _ARG_KEYS if k in value), None)
    if args is None:
        if set(value) - {"name", "type", "id"}:
            return None
        args = {}
    if not isinstance(args, (dict, str)):
        return None
    return name, args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _decode_at(text: str, start: int) -> tuple[Any, int]:
    """(the JSON value starting at ``start``, where it ends); (None, 0) when none decodes."""
    if start < 0 or start >= len(text):
        return None, 0
    try:
        return json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None, 0


def _first_bracket(text: str) -> int:
    positions = [p for p in (text.find("["), text.find("{")) if p >= 0]
    return min(positions) if positions else -1


def _skip_closers(text: str, at: int) -> int:
    """Past a ``)`` or a closing fence right after a ``functions.NAME`` argument object."""
    m = re.match(r"\s*\)?\s*(?:```)?", text[at:])
    return at + (m.end() if m else 0)


def _unfence(text: str) -> str:
    m = re.fullmatch(r"```[\w-]*\s*\n?(.*?)\n?```", text.strip(), re.DOTALL)
    return m.group(1).strip() if m else text


def _numbered(raw: list[tuple[str, str]], id_prefix: str) -> list[ToolCall]:
    return [ToolCall(f"{id_prefix}{i}", name, args, via=VIA_TEXT) for i, (name, args) in enumerate(raw, 1)]


# -- a query written in a reply with no call -----------------------------------------------------

_CLOSED_FENCE = re.compile(r"```[ \t]*([\w-]*)[ \t]*\n(.*?)```", re.DOTALL)
_SQL_START = re.compile(r"^\s*(?:SELECT|WITH)\b", re.IGNORECASE)
_RUN_SQL_LITERAL = re.compile(r"""run_sql\(\s*(?:[rR]?)("{3}|'{3}|"|')(.*?)\1\s*\)""", re.DOTALL)
_CODE_LANGUAGES = {"python", "py", "python3"}
_SQL_LANGUAGES = {"sql", "duckdb", "sqlite", "postgresql", "mysql"}


def written_query(content: str) -> str | None:
    """The SQL query a reply wrote instead of calling a tool, or None.

    Read, last one first: a closed ```sql block (or an unlabelled block that starts with SELECT
    or WITH), or the string given to `run_sql(…)` in a ```python (or ```sql) block. A block of several
    statements gives its last one. Code that is not one of these (pandas reading a file, a bare
    `result = None`) gives None.
    """
    for fence in reversed(list(_CLOSED_FENCE.finditer(content or ""))):
        language, body = fence.group(1).lower(), fence.group(2)
        literals = _RUN_SQL_LITERAL.findall(body)
        if literals and language in _SQL_LANGUAGES:  # a run_sql("…") line in a block labelled sql
            query = _last_statement(literals[-1][1])
        elif language in _SQL_LANGUAGES or (not language and _SQL_START.match(body)):
            query = _last_statement(body)
        elif language in _CODE_LANGUAGES or not language:
            query = _last_statement(literals[-1][1]) if literals else None
        else:
            continue
        if query and _SQL_START.match(query):
            return query
    return None


def _last_statement(sql: str) -> str | None:
    """The last statement, without the comment lines that lead it."""
    statements = [_uncommented(s) for s in sql.split(";")]
    statements = [s for s in statements if s]
    return statements[-1] if statements else None


def _uncommented(sql: str) -> str:
    lines = sql.strip().splitlines()
    while lines and (not lines[0].strip() or lines[0].strip().startswith("--")):
        lines.pop(0)
    return "\n".join(lines).strip()


SQL_ARGUMENTS = ("query", "sql")  # the arguments of a tool call that carry a query (explore_data, edit_solver, query)


def reply_query(content: str, tool_calls: Sequence[ToolCall] = ()) -> str | None:
    """The query one reply gives when it was asked for a query: its ```sql block (or run_sql
    literal, `written_query`), else the query argument of a call it made anyway, natively or
    written as text (a small model often wraps its query in ```json {"name": "query", ...}```).
    Used by both direct paths (the Solver's and the analyst's)."""
    sql = written_query(content)
    if sql:
        return sql
    calls = list(tool_calls) or parse_text_tool_calls(content or "").calls
    for call in calls:
        try:
            args = json.loads(call.arguments_raw)
        except (TypeError, ValueError):
            continue
        if isinstance(args, dict):
            for key in SQL_ARGUMENTS:
                value = args.get(key)
                if isinstance(value, str) and value.strip() and not value.strip().startswith("\\"):
                    return value.strip()
    return None


def same_query(a: str, b: str) -> bool:
    """Two queries that differ only in spacing, the case of their words or a final semicolon. The
    text inside quotes is compared as written: `= 'North'` after `= 'north'` is the fix an empty
    result asks for, not the same query."""
    return query_key(a) == query_key(b)


def query_key(sql: str) -> str:
    """The form `same_query` compares: equal keys, the same query."""
    return _query_key(sql)


_NULL_NAMES = ("", "null", "none")


def is_null_call(call: ToolCall) -> bool:
    """A call that calls nothing: no name (blank, `null`, `None`) and no arguments (blank, `null`,
    `{}`, or an object whose every value is empty, as `{"name": null, "arguments": null}`). Small
    models send it between turns (a native call with a null function, `<tool_call>null</tool_call>`);
    it is a reply without a call, not an unknown tool."""
    if (call.name or "").strip().lower() not in _NULL_NAMES:
        return False
    raw = (call.arguments_raw or "").strip()
    if raw.lower() in _NULL_NAMES:
        return True
    try:
        value = json.loads(raw)
    except ValueError:
        return False
    if isinstance(value, dict):
        return all(v in (None, "", {}, []) for v in value.values())
    return value in (None, "", [], {})


_QUOTED = re.compile(r"('(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")")


def _query_key(sql: str) -> str:
    parts = _QUOTED.split(" ".join(sql.split()).rstrip(";"))
    return "".join(part if i % 2 else part.lower() for i, part in enumerate(parts))
