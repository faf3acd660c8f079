"""`datasolver mcp`: the engine's tools, and a task's four solver tools, for any MCP client.

An interface: it opens the data (and, for a task folder, a prepared scratch copy), adapts each
existing tool to MCP and formats its answer. Every tool's behaviour lives in `datasolver.ask`
and `datasolver.solver`. Read-only by default: the solver tools that change or run solver.py
are offered only with `allow_write` (and even then they write to the scratch copy, never the
input). Failures come back as MCP error results carrying the one JSON error shape.
"""

from __future__ import annotations

import inspect
import json
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from datasolver import __version__
from datasolver.ask import AskToolbox, DataPackage, open_package
from datasolver.ask.prompts import render_prompt
from datasolver.errors import error_record
from datasolver.toolkit import Tool, Toolbox

SERVER_NAME = "datasolver"
READ_TOOLS = ("explore_data", "read_solver")
WRITE_TOOLS = ("edit_solver", "run_solver")
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_WRITES_SCRATCH = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)



@dataclass
class DataServer:
    """The MCP server with what it serves; close() releases the catalog and the scratch copy."""

    mcp: MCPServer
    package: DataPackage
    toolbox: AskToolbox
    solver: Any = None
    scratch: Path | None = None
    _owned: list[Path] = field(default_factory=list)

    def run(self, http_port: int | None = None, host: str = "127.0.0.1") -> None:
        """Serve over stdio, or streamable HTTP at http://HOST:PORT/mcp."""
        if http_port is None:
            self.mcp.run("stdio")
        else:
            self.mcp.run("streamable-http", host=host, port=http_port)

    def close(self) -> None:
        if self.solver is not None:
            self.solver.close()
        self.package.close()
        for path in self._owned:
            shutil.rmtree(path, ignore_errors=True)

    def __enter__(self) -> DataServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def build_server(
    path: Path | str, *, allow_write: bool = False, symmetric: Iterable[str] = (), scratch_root: Path | None = None,
) -> DataServer:
    """A server over a data folder, or over a task folder (then with the solver tools too)."""
    path = Path(path)
    if not (path / "task.json").is_file():
        package = open_package(path, symmetric=symmetric)
        server = DataServer(_new_mcp(task_mode=False, allow_write=False), package, AskToolbox(package, with_final=False))
        _add_engine_tools(server)
        return server
    from datasolver.solver import SolverToolbox, prepare_task, write_scaffold

    owned = [] if scratch_root is not None else [Path(tempfile.mkdtemp(prefix="datasolver-mcp-"))]
    scratch = prepare_task(path, scratch_root or owned[0])
    package = open_package(scratch, derived_dir=scratch / "derived", symmetric=symmetric)
    write_scaffold(scratch, package.catalog.names())  # list document tables in solver.py too
    solver = SolverToolbox(scratch, catalog=package.catalog)
    server = DataServer(_new_mcp(task_mode=True, allow_write=allow_write), package,
                        AskToolbox(package, with_final=False), solver, scratch, owned)
    _add_engine_tools(server)
    for name in READ_TOOLS + (WRITE_TOOLS if allow_write else ()):
        _register(server.mcp, solver, solver.tool(name), _READ_ONLY if name in READ_TOOLS else _WRITES_SCRATCH)
    return server


def _new_mcp(*, task_mode: bool, allow_write: bool) -> MCPServer:
    if not task_mode:
        extra = ""
    elif allow_write:
        extra = (" This is a task: read_solver, edit_solver and run_solver work on solver.py in a scratch copy "
                 "(run_solver writes prediction.csv there); explore_data is the solver's own view of the tables.")
    else:
        extra = (" This is a task: read_solver shows solver.py (read-only mode; start the server with "
                 "--allow-write to edit and run it); explore_data is the solver's own view of the tables.")
    return MCPServer(SERVER_NAME, version=__version__, instructions=render_prompt("mcp_instructions", task_tools=extra))


def _add_engine_tools(server: DataServer) -> None:
    for tool in server.toolbox.tools:
        _register(server.mcp, server.toolbox, tool, _READ_ONLY)


def _register(mcp: MCPServer, toolbox: Toolbox[Any], tool: Tool[Any], annotations: ToolAnnotations) -> None:
    """Expose one kit tool: its MCP parameters are the fields of its argument model; a result that
    is not ok comes back as an MCP error carrying the one JSON error shape."""
    name = tool.name

    def call(**kwargs: Any) -> CallToolResult:
        result = toolbox.call(name, kwargs)
        body = result.text if result.ok else json.dumps(error_record(result.kind, result.text), ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=body)], is_error=not result.ok)

    params = []
    for field_name, info in tool.args_model.model_fields.items():
        default = inspect.Parameter.empty if info.is_required() else info.get_default(call_default_factory=True)
        annotation: Any = info.annotation
        if info.description:
            annotation = Annotated[annotation, Field(description=info.description)]
        params.append(inspect.Parameter(field_name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=annotation))
    call.__signature__ = inspect.Signature(params, return_annotation=CallToolResult)  # type: ignore[attr-defined]
    call.__name__ = name
    mcp.add_tool(call, name=name, description=tool.description, annotations=annotations)
