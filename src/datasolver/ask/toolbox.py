"""AskToolbox: the analyst's tools (and final_answer) bound to one data package and one result table.

The same toolbox serves the ask loop and the MCP server (which offers the data tools only). It is
the tool kit's Toolbox: mistakes the caller can fix come back as "retry" results, refusals of the
data as "failed"; nothing the model sends raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from datasolver.ask import tools as T
from datasolver.ask.answer import fill_template, has_placeholder, tidy_answer
from datasolver.ask.config import AskLimits
from datasolver.ask.errors import UnknownResult
from datasolver.ask.handles import Handle, HandleTable
from datasolver.ask.package import DataPackage
from datasolver.ask.refs import parse_ref
from datasolver.ask.render import answer_data, plain_row_format, row_format_fields
from datasolver.data import UnknownTable
from datasolver.errors import DatasolverError
from datasolver.toolkit import Tool, Toolbox, ToolResult, hinted

FINAL_ANSWER = "final_answer"
QUERY_TOOL = "query"
ANSWER_RECORDED = "answer recorded"


def _table_hint(exc: DatasolverError) -> str:
    """The analyst's next step after an unknown table name (the engine's message names no tool)."""
    return " Call list_tables for the names." if isinstance(exc, UnknownTable) else ""


@dataclass
class FinalAnswer:
    """The answer as it will be printed, and what it rests on."""

    text: str
    template: str | None = None
    data: Handle | None = None
    evidence: list[Handle] = field(default_factory=list)
    guessed_evidence: bool = False


def final_answer(
    ctx: T.AskContext, answer: str, data: T.Source | None = None, row_format: str | None = None,
    evidence: list[T.Source] = [],  # noqa: B006 - read only; the schema's default
) -> ToolResult:
    """Give the final answer and stop. Answer only what is asked, in the data's own words, with units;
    several answers separated by commas. For a list longer than the answer budget write a template
    with {DATA} and name the result in `data`: the program writes every row there.

    Args:
        answer: The answer text; or a template with {DATA} where the program writes every row of `data` (for lists longer than the answer budget).
        data: The result whose rows fill {DATA} (default @latest).
        row_format: How each row is written in {DATA}, with {column} fields, e.g. "{<column>} ({<column>})"; default: cells joined by spaces.
        evidence: The results the answer rests on.
    """
    text = (answer or "").strip()
    if not text:
        return ToolResult.retry("the answer is empty: write the answer (or a template with {DATA}).")
    handles = ctx.handles
    named = _NAMED_RESULT.match(text)
    if named is not None and data is None:  # the answer names a result (`@1`): its rows are the answer
        try:
            written = _written_from(handles, ctx.limits, handles.get(parse_ref(named.group(1))))
        except UnknownResult as exc:
            return ToolResult.retry(f"UnknownResult: {exc}")
        return ToolResult(ANSWER_RECORDED, value=written)
    try:
        cited_evidence = [handles.get(r) for r in evidence]
        filled_from = None
        if has_placeholder(text) or data is not None:
            filled_from = handles.get(data if data is not None else "latest")
    except UnknownResult as exc:
        return ToolResult.retry(f"UnknownResult: {exc}")
    template = None
    if has_placeholder(text):
        assert filled_from is not None
        missing = [f for f in row_format_fields(row_format or "") if f not in filled_from.columns]
        if missing:
            return ToolResult.retry(f"row_format names {', '.join(missing)}, which {filled_from.ref} does not have. "
                                    f"Columns: {', '.join(filled_from.columns)}")
        template = text  # an empty result is questioned by the answer checks (ask/checks.py), not here
        rows = handles.fetch(filled_from.index, ctx.limits.data_rows)
        text = fill_template(text, answer_data(rows, row_format, ctx.limits.data_chars))
    cited = ([filled_from] if filled_from is not None else []) + [
        h for h in cited_evidence if filled_from is None or h.index != filled_from.index]
    guessed = not cited and handles.latest() is not None
    if guessed:
        cited = [handles.latest()]  # type: ignore[list-item]
    return ToolResult(ANSWER_RECORDED, value=FinalAnswer(tidy_answer(text), template, filled_from, cited, guessed))


DATA_TOOLS: tuple[Tool[T.AskContext], ...] = tuple(Tool(hinted(_table_hint)(f), name=n) for n, f in (
    ("list_tables", T.list_tables),
    ("describe_table", T.describe_table),
    (QUERY_TOOL, T.query),
    ("filter", T.filter_rows),
    ("group", T.group),
    ("sort", T.sort),
    ("join", T.join),
    ("related", T.related),
    ("lint", T.lint),
    ("join_keys", T.join_keys),
    ("render", T.render),
))
FINAL_TOOL: Tool[T.AskContext] = Tool(final_answer)


class AskToolbox(Toolbox[T.AskContext]):
    """The data tools that apply to this package (`related` only where there is a graph, `lint` only
    where there is a knowledge.md), and final_answer unless `with_final` is off (the MCP server
    offers data tools only)."""

    def __init__(self, package: DataPackage, limits: AskLimits | None = None, handles: HandleTable | None = None,
                 *, with_final: bool = True) -> None:
        limits = limits or AskLimits()
        handles = handles or HandleTable(package.catalog, limits.sample_rows)
        tools = [t for t in DATA_TOOLS if (t.name != "related" or package.graphs)
                 and (t.name != "lint" or package.knowledge.strip())]
        super().__init__(tools + ([FINAL_TOOL] if with_final else []), T.AskContext(package, handles, limits),
                         result_chars=limits.tool_result_chars)

    @property
    def handles(self) -> HandleTable:
        return self.context.handles

    @property
    def limits(self) -> AskLimits:
        return self.context.limits

    def answer_from_text(self, content: str) -> FinalAnswer:
        """A plain-text reply taken as the final answer (the model did not call final_answer)."""
        latest = self.handles.latest()
        result = final_answer(self.context, content)
        if isinstance(result.value, FinalAnswer):
            return result.value
        return FinalAnswer(tidy_answer(content), evidence=[latest] if latest else [], guessed_evidence=True)


def result_answer(toolbox: AskToolbox, handle: Handle) -> FinalAnswer:
    """The answer the program writes from a result: its column names, then its rows (one value as the
    value; several columns as `first (others)`; a list separated by ", "), capped as {DATA} is."""
    return _written_from(toolbox.handles, toolbox.limits, handle)


# An answer that is only a result's name, `@1` or `@latest` (a bare number is an answer, not a name).
_NAMED_RESULT = re.compile(r"^@\s*(\d+|latest|last)\.?$", re.IGNORECASE)


def _written_from(handles: HandleTable, limits: AskLimits, handle: Handle) -> FinalAnswer:
    rows = handles.fetch(handle.index, limits.data_rows)
    row_format = plain_row_format(rows.columns)
    lead = rows.columns[0] + (f" ({', '.join(rows.columns[1:])})" if len(rows.columns) > 1 else "")
    template = f"{lead}: {{DATA}}"
    text = fill_template(template, answer_data(rows, row_format, limits.data_chars))
    return FinalAnswer(text, template, handle, [handle])
