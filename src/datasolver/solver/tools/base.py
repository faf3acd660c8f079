"""What every solver tool shares: the result value, the per-task context, the tool record.

A tool is a plain function `tool(ctx, **arguments) -> ToolResult` with a pydantic model for its
arguments. Its docstring is what the model sees: the text before `Args:` is the description and
the `Args:` entries become the parameter descriptions of the JSON schema.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal

from pydantic import BaseModel

from datasolver.solver.layout import ScratchLayout
from datasolver.solver.sandbox import SandboxLimits

if TYPE_CHECKING:
    from datasolver.data import Catalog

ResultKind = Literal["ok", "retry", "failed"]


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer to the model. kind "retry": fix your arguments; "failed": adapt."""

    text: str
    kind: ResultKind = "ok"

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    @classmethod
    def retry(cls, text: str) -> "ToolResult":
        return cls(text, "retry")

    @classmethod
    def failed(cls, text: str) -> "ToolResult":
        return cls(text, "failed")


@dataclass
class ToolContext:
    """One task's scratch folder, its catalog (opened on first use) and sandbox limits."""

    layout: ScratchLayout
    open_catalog: Callable[[], "Catalog"]
    limits: SandboxLimits = field(default_factory=SandboxLimits)


@dataclass(frozen=True)
class SolverTool:
    """One registered tool: its name, function and argument model."""

    name: str
    function: Callable[..., ToolResult]
    args_model: type[BaseModel]

    @property
    def description(self) -> str:
        return _split_docstring(self.function)[0]

    @property
    def parameter_docs(self) -> dict[str, str]:
        return _split_docstring(self.function)[1]

    def schema(self) -> dict[str, Any]:
        """OpenAI function-calling entry: {"type": "function", "function": {...}}."""
        params = self.args_model.model_json_schema()
        params.pop("title", None)
        docs = self.parameter_docs
        for name, prop in params.get("properties", {}).items():
            prop.pop("title", None)
            if name in docs:
                prop["description"] = docs[name]
        params.setdefault("required", [])
        params["additionalProperties"] = False
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": params}}

    def __call__(self, ctx: ToolContext, args: BaseModel) -> ToolResult:
        return self.function(ctx, **args.model_dump())


_ARG_LINE = re.compile(r"^\s{4}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _split_docstring(function: Callable[..., Any]) -> tuple[str, dict[str, str]]:
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
