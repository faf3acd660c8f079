"""The tool kit shared by the solver tools, the analyst's tools, both loops and the MCP server:
a tool is a typed function whose docstring is its prompt (`tool.py`), and one runner parses,
runs and traces the model's calls (`runner.py`)."""

from datasolver.toolkit.runner import CallHooks, ToolCall, ToolOutcome, ToolRunner
from datasolver.toolkit.tool import ResultKind, Tool, Toolbox, ToolResult, compact_validation, hinted, unknown_tool

__all__ = [
    "CallHooks",
    "ResultKind",
    "Tool",
    "ToolCall",
    "ToolOutcome",
    "ToolResult",
    "ToolRunner",
    "Toolbox",
    "compact_validation",
    "hinted",
    "unknown_tool",
]
