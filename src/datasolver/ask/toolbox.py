"""AskToolbox: the analyst's tools by name over one data package and one result table.

The same toolbox serves the ask loop and the MCP server. Mistakes the caller can fix come back
as "retry" results, refusals of the data as "failed"; nothing the model sends raises.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from datasolver.ask import tools as T
from datasolver.ask.answer import fill_template, has_placeholder, tidy_answer
from datasolver.ask.config import AskLimits
from datasolver.ask.errors import AskError, ReservedName, UnknownColumn, UnknownRelation, UnknownResult
from datasolver.ask.handles import Handle, HandleTable
from datasolver.ask.package import DataPackage
from datasolver.ask.render import answer_data, row_format_fields
from datasolver.data import DataError, UnknownTable
from datasolver.llm import parse_tool_arguments, unknown_tool_message

FINAL_ANSWER = "final_answer"
_FIX_ARGUMENTS = (UnknownResult, ReservedName, UnknownColumn, UnknownRelation, UnknownTable, ValueError)


@dataclass(frozen=True)
class AskTool:
    """One registered tool: name, function (its docstring is the description) and argument model."""

    name: str
    function: Callable[[T.AskContext, Any], T.AskToolResult] | None
    args_model: type[BaseModel]
    description: str = ""

    def schema(self) -> dict[str, Any]:
        """OpenAI function-calling entry."""
        params = _inline(self.args_model.model_json_schema())
        params.pop("description", None)
        params.setdefault("properties", {})
        params.setdefault("required", [])
        text = self.description or inspect.getdoc(self.function) or ""
        return {"type": "function", "function": {"name": self.name, "description": " ".join(text.split()),
                                                 "parameters": params}}


DATA_TOOLS: tuple[AskTool, ...] = (
    AskTool("list_tables", T.list_tables, T.ListTablesArgs),
    AskTool("describe_table", T.describe_table, T.DescribeArgs),
    AskTool("query", T.query, T.QueryArgs),
    AskTool("filter", T.filter_rows, T.FilterArgs),
    AskTool("group", T.group, T.GroupArgs),
    AskTool("sort", T.sort, T.SortArgs),
    AskTool("join", T.join, T.JoinArgs),
    AskTool("related", T.related, T.RelatedArgs),
    AskTool("render", T.render, T.RenderArgs),
)
FINAL_TOOL = AskTool(
    FINAL_ANSWER, None, T.FinalAnswerArgs,
    "Give the final answer and stop. Answer only what is asked, in the data's own words, with units; "
    "several answers separated by commas. For a list longer than the answer budget write a template "
    "with {DATA} and name the result in `data`: the program writes every row there.",
)


@dataclass
class FinalAnswer:
    """The answer as it will be printed, and what it rests on."""

    text: str
    template: str | None = None
    data: Handle | None = None
    evidence: list[Handle] = field(default_factory=list)
    guessed_evidence: bool = False


class AskToolbox:
    """Tools bound to one data package and one result table."""

    def __init__(self, package: DataPackage, limits: AskLimits | None = None, handles: HandleTable | None = None) -> None:
        self.limits = limits or AskLimits()
        self.handles = handles or HandleTable(package.catalog, self.limits.sample_rows)
        self.context = T.AskContext(package, self.handles, self.limits)
        self._warned_empty: set[int] = set()

    @property
    def tools(self) -> tuple[AskTool, ...]:
        """The data tools that apply to this package (`related` only where there is a graph)."""
        return tuple(t for t in DATA_TOOLS if t.name != "related" or self.context.package.graphs)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    def schemas(self, with_final: bool = True) -> list[dict[str, Any]]:
        return [t.schema() for t in self.tools] + ([FINAL_TOOL.schema()] if with_final else [])

    def parse(self, name: str, raw: str | None) -> tuple[BaseModel | None, str | None, list[str]]:
        """Repair and validate raw model arguments: (arguments, error text, repairs applied)."""
        if name != FINAL_ANSWER and name not in self.names:
            return None, unknown_tool_message(name, self.names + [FINAL_ANSWER]), []
        model = FINAL_TOOL.args_model if name == FINAL_ANSWER else self._tool(name).args_model
        parsed = parse_tool_arguments(raw, model, tool_name=name)
        return parsed.value, parsed.error, parsed.repairs

    def call(self, name: str, args: BaseModel | dict[str, Any]) -> T.AskToolResult:
        """Run one data tool. Unknown tools and invalid arguments come back as "retry"."""
        if name not in self.names:
            return T.AskToolResult(f"unknown tool {name!r}; tools: {', '.join(self.names)}", "retry")
        tool = self._tool(name)
        try:
            validated = args if isinstance(args, tool.args_model) else tool.args_model.model_validate(
                args.model_dump() if isinstance(args, BaseModel) else args)
        except ValidationError as exc:
            return T.AskToolResult(f"invalid arguments for {name}: {_compact(exc)}", "retry")
        try:
            result = tool.function(self.context, validated)  # type: ignore[misc]
        except _FIX_ARGUMENTS as exc:
            hint = " Call list_tables for the names." if isinstance(exc, UnknownTable) else ""
            return T.AskToolResult(f"{type(exc).__name__}: {exc}{hint}", "retry")
        except (DataError, AskError) as exc:
            return T.AskToolResult(f"{type(exc).__name__}: {exc}", "failed")
        return _cut(result, self.limits.tool_result_chars)

    def finalize(self, args: T.FinalAnswerArgs) -> FinalAnswer | T.AskToolResult:
        """Check a final answer and fill its template; a "retry" result says what to fix."""
        text = (args.answer or "").strip()
        if not text:
            return T.AskToolResult("the answer is empty: write the answer (or a template with {DATA}).", "retry")
        try:
            evidence = [self.handles.get(r) for r in args.evidence]
            data = None
            if has_placeholder(text) or args.data is not None:
                data = self.handles.get(args.data if args.data is not None else "latest")
        except UnknownResult as exc:
            return T.AskToolResult(f"UnknownResult: {exc}", "retry")
        template = None
        if has_placeholder(text):
            assert data is not None
            missing = [f for f in row_format_fields(args.row_format or "") if f not in data.columns]
            if missing:
                return T.AskToolResult(f"row_format names {', '.join(missing)}, which {data.ref} does not have. "
                                       f"Columns: {', '.join(data.columns)}", "retry")
            if data.rows == 0 and data.index not in self._warned_empty:
                self._warned_empty.add(data.index)  # warn once: an empty result may be the true answer
                return T.AskToolResult(f"{data.ref} has no rows, so {{DATA}} would be empty. Check the conditions "
                                       "(values, case, spelling); if nothing matches, say so in the answer.", "retry")
            template = text
            text = fill_template(text, answer_data(self.handles.fetch(data.index), args.row_format))
        cited = ([data] if data is not None else []) + [h for h in evidence if data is None or h.index != data.index]
        guessed = not cited and self.handles.latest() is not None
        if guessed:
            cited = [self.handles.latest()]  # type: ignore[list-item]
        return FinalAnswer(tidy_answer(text), template, data, cited, guessed)

    def answer_from_text(self, content: str) -> FinalAnswer:
        """A plain-text reply taken as the final answer (the model did not call final_answer)."""
        latest = self.handles.latest()
        if latest is not None:
            self._warned_empty.add(latest.index)  # no second chance to warn: take the text as it is
        result = self.finalize(T.FinalAnswerArgs(answer=content))
        if isinstance(result, FinalAnswer):
            return result
        return FinalAnswer(tidy_answer(content), evidence=[latest] if latest else [], guessed_evidence=True)

    def _tool(self, name: str) -> AskTool:
        for tool in DATA_TOOLS:
            if tool.name == name:
                return tool
        raise KeyError(name)


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with `$ref`s replaced by their definitions and titles dropped (plainer for small models)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {k: walk(v) for k, v in node.items()
                    if k != "$defs" and not (k == "title" and isinstance(v, str))}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


def _cut(result: T.AskToolResult, limit: int) -> T.AskToolResult:
    if len(result.text) <= limit:
        return result
    return T.AskToolResult(result.text[:limit] + f"\n…[cut at {limit} characters]", result.kind, result.handle)


def _compact(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())
