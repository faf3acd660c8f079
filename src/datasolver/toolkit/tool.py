"""One tool kit for every tool-calling loop: a tool is a typed function, its docstring the prompt.

`Tool(function)` reads the function's signature (after the context argument) and its
Google-style docstring: the text before `Args:` is the description the model sees, each `Args:`
entry the description of one parameter; the argument model and the JSON schema are built from
the signature, so there is no second copy of the arguments. The record describes the tool and
nothing else: its name, schema, timeout (`timeout_grace_s`, `prepare`) and whether a call runs
the answer (`submits`). How a loop reacts to a call's outcome is the loop's: two callbacks around
each call (`toolkit.runner.CallHooks`). A tool's errors in its own words are the tool's
(`hinted`). `Toolbox.call` validates and dispatches; an exception becomes a result through one
rule (`error_result`): a named error says its kind, anything else is a bug of ours and raises.
A leaf module: it imports only the error root.
"""

from __future__ import annotations

import copy
import difflib
import functools
import inspect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from datasolver.clip import clip
from datasolver.errors import DatasolverError

ResultKind = Literal["ok", "retry", "failed"]
"""ok; retry: fix your arguments (the model's mistake); failed: the data or the run said no, adapt."""

C = TypeVar("C")
F = TypeVar("F", bound=Callable[..., "ToolResult"])


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer to the model, with an optional value for the program (e.g. a result handle)."""

    text: str
    kind: ResultKind = "ok"
    value: Any = None

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    @classmethod
    def retry(cls, text: str) -> ToolResult:
        return cls(text, "retry")

    @classmethod
    def failed(cls, text: str) -> ToolResult:
        return cls(text, "failed")


def unknown_tool(name: str, valid_names: Iterable[str]) -> str:
    """The one wording for a tool name that does not exist (agent, analyst, MCP, `datasolver tool`)."""
    names = sorted(valid_names)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return f"unknown tool '{name}'.{hint} Valid tools: {', '.join(names)}."


def unknown_tool_message(name: str, valid_names: Iterable[str]) -> str:
    """The tool result for a model's call to a tool that does not exist."""
    return f"Error: {unknown_tool(name, valid_names)} Call one of them."


def hinted(hint: Callable[[DatasolverError], str]) -> Callable[[F], F]:
    """A tool function's decorator: its named errors end with what to do next in the tool's own
    words (`hint(error)`; "" for none), e.g. which of its commands lists the tables (the engine's
    messages name no tool). Same name, signature and docstring, so it makes the same tool."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def worded(*args: Any, **kwargs: Any) -> ToolResult:
            try:
                return function(*args, **kwargs)
            except DatasolverError as exc:
                return error_result(exc, hint(exc))

        return cast(F, worded)

    return decorate


def error_result(exc: DatasolverError, advice: str = "") -> ToolResult:
    """The one exception → result rule: a named error as the model reads it, `Type: message` (and
    the tool's advice), of the kind it names (`tool_kind`: "retry" for a mistake the model can
    correct, `ToolRetry` and the errors that name a table, a result or a column; else "failed").
    Any other exception, a ValueError included, is a bug of ours and is no result."""
    return ToolResult(f"{type(exc).__name__}: {exc}{advice}", exc.tool_kind)


@dataclass(frozen=True)
class Tool(Generic[C]):
    """One tool: `function(ctx, **arguments) -> ToolResult`, its name, and its own settings."""

    function: Callable[..., ToolResult]
    name: str = ""
    description: str = ""
    """Overrides the docstring's description (for a tool whose function is not the model's view)."""
    timeout_grace_s: float = 0.0
    """Extra seconds a loop waits beyond its tool timeout (a tool with its own timeout inside)."""
    prepare: Callable[[BaseModel, float], BaseModel] | None = None
    """Adjust validated arguments to the loop's tool timeout before the call (e.g. cap a timeout)."""
    submits: bool = False
    """A call runs the answer (the loop watches whether the latest one succeeded, and its checks)."""
    args_model: type[BaseModel] = field(init=False, repr=False, compare=False)
    parameter_docs: dict[str, str] = field(init=False, repr=False, compare=False)
    _schema: dict[str, Any] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        head, params = split_docstring(self.function)
        object.__setattr__(self, "name", self.name or self.function.__name__)
        object.__setattr__(self, "description", " ".join((self.description or head).split()))
        object.__setattr__(self, "parameter_docs", params)
        object.__setattr__(self, "args_model", _args_model(self.function, self.name, params))

    def schema(self) -> dict[str, Any]:
        """OpenAI function-calling entry: {"type": "function", "function": {...}} (a fresh copy)."""
        if not self._schema:  # pydantic builds it in ~5-20 ms; every task asks again
            params = inline_schema(self.args_model.model_json_schema())
            params.pop("description", None)
            params.setdefault("properties", {})
            params.setdefault("required", [])
            params["additionalProperties"] = False
            self._schema.update(type="function", function={"name": self.name, "description": self.description,
                                                           "parameters": params})
        return copy.deepcopy(self._schema)

    def validate(self, args: BaseModel | dict[str, Any]) -> BaseModel:
        """The arguments as this tool's model (ValidationError when they do not fit)."""
        if isinstance(args, self.args_model):
            return args
        return self.args_model.model_validate(args.model_dump() if isinstance(args, BaseModel) else args)

    def __call__(self, ctx: C, args: BaseModel) -> ToolResult:
        return self.function(ctx, **{name: getattr(args, name) for name in self.args_model.model_fields})


class Toolbox(Generic[C]):
    """Tools by name over one context. `call` never raises for the model's mistakes."""

    def __init__(self, tools: Sequence[Tool[C]], context: C, *, result_chars: int | None = None) -> None:
        self._tools = {t.name: t for t in tools}
        self.context = context
        self.result_chars = result_chars

    @property
    def tools(self) -> tuple[Tool[C], ...]:
        return tuple(self._tools.values())

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def tool(self, name: str) -> Tool[C]:
        """The tool called `name` (KeyError for a name that is not here: a programmer's mistake)."""
        return self._tools[name]

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self._tools.values()]

    def interrupt(self) -> None:
        """Stop what a call is running after its timeout (a toolbox with a database stops its query)."""

    def call(self, name: str, args: BaseModel | dict[str, Any]) -> ToolResult:
        """Validate `args` against the tool's model and run it; errors come back as results."""
        if name not in self._tools:
            return ToolResult.retry(unknown_tool(name, self._tools))
        tool = self._tools[name]
        try:
            validated = tool.validate(args)
        except ValidationError as exc:
            return ToolResult.retry(f"invalid arguments for {name}: {compact_validation(exc)}")
        try:
            result = tool(self.context, validated)
        except DatasolverError as exc:  # any other exception is a bug of ours: it raises (a loop's
            result = error_result(exc)  # runner records it as an internal error)
        return self._cut(result)

    def _cut(self, result: ToolResult) -> ToolResult:
        limit = self.result_chars
        if limit is None or len(result.text) <= limit:
            return result
        return ToolResult(clip(result.text, limit, counted=True), result.kind, result.value)


def compact_validation(exc: ValidationError) -> str:
    """A pydantic ValidationError as one line: `field: message; …`."""
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors())


def inline_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with `$ref`s replaced by their definitions and titles dropped (plainer for small models)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {k: walk(v) for k, v in node.items() if k != "$defs" and not (k == "title" and isinstance(v, str))}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


_ARG_LINE = re.compile(r"^\s{4}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def split_docstring(function: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """(description, {parameter: description}) from a Google-style docstring."""
    doc = inspect.getdoc(function) or ""
    head, _, args_block = doc.partition("\nArgs:\n")
    params: dict[str, str] = {}
    current = None
    for line in args_block.splitlines():
        if line and not line.startswith(" "):
            break  # the next section (Returns:, …) ends Args
        match = _ARG_LINE.match(line)
        if match:
            current = match.group(1)
            params[current] = match.group(2).strip()
        elif current and line.strip():
            params[current] += " " + line.strip()
    return head.strip(), params


def _args_model(function: Callable[..., Any], name: str, docs: dict[str, str]) -> type[BaseModel]:
    """A pydantic model of the parameters after the first (the context): types, defaults and
    `Annotated[..., Field(...)]` constraints from the signature, descriptions from the docstring."""
    hints = inspect.get_annotations(function, eval_str=True)
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(function).parameters.values())[1:]:
        annotation = hints.get(param.name, Any)
        if param.name in docs:
            annotation = Annotated[annotation, Field(description=docs[param.name])]
        fields[param.name] = (annotation, ... if param.default is inspect.Parameter.empty else param.default)
    model_name = "".join(part.title() for part in name.split("_")) + "Args"
    return create_model(model_name, __config__=ConfigDict(extra="ignore"), **fields)
