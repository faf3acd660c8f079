"""`datasolver mcp`: the engine's tools, and a task's four solver tools, for any MCP client.

An interface: it opens the data (and, for a task folder, a prepared scratch copy), adapts each
existing tool to MCP and formats its answer. Every tool's behaviour lives in `datasolver.ask`
and `datasolver.solver`. Read-only by default: the solver tools that change or run solver.py
are offered only with `allow_write` (and even then they write to the scratch copy, never the
input). Failures come back as MCP error results carrying the one JSON error shape.

Tool calls run one at a time in a worker thread, so the event loop keeps answering every client
(initialize, tools/list, a queued call's time limit) while a query runs; each call has a time
limit past which the catalog is interrupted. The tables load once, in the background, as the
server starts (into the table cache, so the next server on the same files reads none of them); a
call made meanwhile waits for that load before its own time limit starts, so a load never counts
against a query's timeout. SIGINT and SIGTERM stop the server and close() removes
its temporary folders. Exposure beyond loopback, and how many sessions may be open for how long,
is decided in `datasolver.mcp_http`.

Each MCP session has its own result handles (`@N`, `@latest`): one session never sees another's
results, and a session's results are dropped when it ends (DELETE, idle timeout). The task's
scratch copy (solver.py) is one for the whole server.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import inspect
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from datasolver import __version__
from datasolver.ask import AskToolbox, DataPackage, open_package
from datasolver.ask.prompts import render_prompt
from datasolver.data import TableCache, TaskFolder, load_task
from datasolver.errors import error_record
from datasolver.mcp_http import (
    SESSION_HEADER,
    SHUTDOWN_GRACE_S,
    BearerAuth,
    Exposure,
    SessionWatch,
    connection_cap,
    guarded_protocol,
    listen_socket,
    plan_exposure,
    quiet_accept_errors,
    url_of,
)
from datasolver.signals import terminate_unwinds
from datasolver.toolkit import Tool, Toolbox, compact_validation, unknown_tool

SERVER_NAME = "datasolver"
READ_TOOLS = ("explore_data", "read_solver")
WRITE_TOOLS = ("edit_solver", "run_solver")
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_WRITES_SCRATCH = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

DEFAULT_QUERY_TIMEOUT_S = 60.0  # one query (and the loads it needs) is interrupted after this
CALL_GRACE_S = 5.0  # a call's own limit: the query timeout plus this (run_solver: its sandbox limit plus this)
STOP_WAIT_S = 5.0  # after interrupting, how long a timed-out call may take to notice
SWEEP_EVERY_S = 30.0  # how often idle sessions' results are looked for (at most)

# The MCP session of the tool call being served (its HTTP session id; None on stdio).
_SESSION: ContextVar[str | None] = ContextVar("datasolver_mcp_session", default=None)


class SessionToolboxes:
    """One AskToolbox, so one result-handle table, per MCP session, over one shared data package.

    `end(session)` forgets a session's toolbox at once (its handles are unreachable from then on);
    the views behind them are dropped by the next `get`, which runs in the tool-call thread, so the
    event loop never waits for the catalog.
    """

    def __init__(self, package: DataPackage) -> None:
        self.package = package
        self._by_session: dict[str | None, AskToolbox] = {None: AskToolbox(package, with_final=False)}
        self._ended: list[AskToolbox] = []
        self._lock = threading.Lock()

    @property
    def default(self) -> AskToolbox:
        """The stdio session's toolbox (and the template of every session's tool list)."""
        return self._by_session[None]

    def get(self, session: str | None) -> AskToolbox:
        with self._lock:
            ended, self._ended = self._ended, []
            toolbox = self._by_session.get(session)
            if toolbox is None:
                toolbox = self._by_session[session] = AskToolbox(self.package, with_final=False)
        for old in ended:
            old.handles.close()
        return toolbox

    def end(self, session: str) -> None:
        with self._lock:
            toolbox = self._by_session.pop(session, None)
            if toolbox is not None:
                self._ended.append(toolbox)

    def open_sessions(self) -> list[str]:
        """The sessions that hold results now (stdio's excepted)."""
        with self._lock:
            return [s for s in self._by_session if s is not None]


class Preload:
    """The server's one load of every table, in a background thread; `ready` is set when it ended
    (loaded, failed files noted in the catalog, or stopped by close())."""

    def __init__(self, package: DataPackage) -> None:
        self.ready = threading.Event()
        self._package = package
        self._thread = threading.Thread(target=self._run, name="mcp-preload", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._package.catalog.load(timeout_s=0)  # no limit: queries' timeouts start after it
        except Exception:  # noqa: BLE001 - a stopped or failed load leaves the tables to load on first use
            pass
        finally:
            self.ready.set()

    def stop(self) -> None:
        if not self.ready.is_set():
            self._package.catalog.interrupt()
        self._thread.join(STOP_WAIT_S)


@dataclass
class DataServer:
    """The MCP server with what it serves; close() releases the catalog and the scratch copy."""

    mcp: MCPServer
    package: DataPackage
    sessions: SessionToolboxes
    solver: Any = None
    scratch: Path | None = None
    _owned: list[Path] = field(default_factory=list)
    _http: Any = None  # the uvicorn server while serving HTTP
    preload: Preload | None = None

    @property
    def toolbox(self) -> AskToolbox:
        """The stdio session's engine tools."""
        return self.sessions.default

    def run(self, http_port: int | None = None, host: str = "127.0.0.1", exposure: Exposure | None = None,
            on_listening: Callable[[str], object] | None = None) -> None:
        """Serve over stdio, or streamable HTTP at http://HOST:PORT/mcp, until SIGINT or SIGTERM.

        `exposure` (from `plan_exposure`) decides token and Host/Origin rules; without it only a
        loopback host is accepted. Over HTTP, `on_listening(url)` is called once the server accepts
        connections; a port in use raises `PortInUse`.
        """
        _plain_logs_in_a_pipe()
        try:
            with terminate_unwinds():
                if http_port is None and exposure is None:
                    with self._exit_on_signals():
                        self.mcp.run("stdio")
                else:
                    if exposure is None:
                        exposure, _ = plan_exposure(host, http_port or 0, allow_remote=False, token=None)
                    asyncio.run(self._serve_http(exposure, on_listening))
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: stop serving; close() cleans up
            pass
        finally:
            self.package.catalog.interrupt()  # a query still running in a worker thread stops now

    @contextlib.contextmanager
    def _exit_on_signals(self) -> Iterator[None]:
        """stdio: SIGINT/SIGTERM clean up, then end the process.

        The MCP library reads stdin in a worker thread that nothing can wake, so neither asyncio's
        cancellation nor interpreter exit would ever finish; after close() the process exits hard.
        """
        def stop(signum: int, frame: object) -> None:
            self.close()
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(128 + signum)

        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        for sig in previous:
            signal.signal(sig, stop)
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    async def _serve_http(self, exposure: Exposure, on_listening: Callable[[str], object] | None = None) -> None:
        import uvicorn

        sock = listen_socket(exposure)  # a taken port: PortInUse, before anything is served

        app: Any = self.mcp.streamable_http_app(
            host=exposure.host, transport_security=exposure.transport_security(),
            max_sessions=exposure.max_sessions, session_idle_timeout=exposure.session_idle_s)
        watch = SessionWatch(app, self.sessions.end, exposure.session_idle_s)
        app = BearerAuth(watch, exposure.token) if exposure.token else watch
        # Slow clients: read deadlines, a connection cap, and no accept error that ends the server.
        asyncio.get_running_loop().set_exception_handler(quiet_accept_errors)
        config = uvicorn.Config(app, host=exposure.host, port=exposure.port, log_level="warning",
                                timeout_graceful_shutdown=SHUTDOWN_GRACE_S, http=guarded_protocol(exposure),
                                limit_concurrency=connection_cap(exposure.max_connections) + 1)
        self._http = uvicorn.Server(config)
        sweeper = asyncio.create_task(self._sweep(watch, min(SWEEP_EVERY_S, exposure.session_idle_s / 4)))
        announce = asyncio.create_task(self._announce(self._http, url_of(sock), on_listening))
        try:
            await self._http.serve(sockets=[sock])
        finally:
            sweeper.cancel()
            announce.cancel()
            sock.close()

    @staticmethod
    async def _announce(http: Any, url: str, on_listening: Callable[[str], object] | None) -> None:
        """Call `on_listening(url)` once uvicorn has started serving on the socket."""
        while not http.started:
            await asyncio.sleep(0.02)
        if on_listening is not None:
            on_listening(url)

    @staticmethod
    async def _sweep(watch: SessionWatch, every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            watch.sweep()

    def stop(self) -> None:
        """Ask a server serving HTTP (in another thread) to stop."""
        if self._http is not None:
            self._http.should_exit = True

    def close(self) -> None:
        if self.preload is not None:
            self.preload.stop()
        self.package.catalog.interrupt()
        if self.solver is not None:
            self.solver.close()
        self.package.close()
        for path in self._owned:
            shutil.rmtree(path, ignore_errors=True)

    def __enter__(self) -> DataServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _plain_logs_in_a_pipe() -> None:
    """The MCP library logs through rich, which wraps at its console's width: 80 columns in a pipe,
    so one record took four lines. Off a terminal, one plain line per record instead."""
    if sys.stderr.isatty():
        return
    from rich.logging import RichHandler

    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, RichHandler):
            root.removeHandler(handler)
            plain = logging.StreamHandler(sys.stderr)
            plain.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
            root.addHandler(plain)


def build_server(
    path: Path | str, *, allow_write: bool = False, symmetric: Iterable[str] = (), scratch_root: Path | None = None,
    query_timeout_s: float = DEFAULT_QUERY_TIMEOUT_S, encoding: str | None = None,
    table_cache: TableCache | None = None,
) -> DataServer:
    """A server over a data folder, or over a task folder (then with the solver tools too).
    `encoding` decodes every CSV file; `table_cache` keeps the loaded tables for the next server."""
    path = Path(path)
    if not TaskFolder(path).is_task():
        package = open_package(path, symmetric=symmetric, encoding=encoding, table_cache=table_cache)
        package.catalog.timeout_s = query_timeout_s
        server = DataServer(_new_mcp(task_mode=False, allow_write=False), package, SessionToolboxes(package))
        server.preload = Preload(package)
        _add_engine_tools(server, _CallGate(package.catalog.interrupt, query_timeout_s + CALL_GRACE_S,
                                            ready=server.preload.ready))
        return server
    from datasolver.solver import SolverToolbox, prepare_scratch, write_scaffold
    from datasolver.solver.tools.run_solver import MAX_TIMEOUT_S

    owned = [] if scratch_root is not None else [Path(tempfile.mkdtemp(prefix="datasolver-mcp-"))]
    try:
        task = load_task(path)  # read once: the Task travels to the scaffold, the package and the tools
        layout = prepare_scratch(task, scratch_root or owned[0])  # made once: the scaffold and the tools get it
        package = open_package(layout.root, derived_dir=layout.derived, symmetric=symmetric, task=task,
                               encoding=encoding, table_cache=table_cache)
    except BaseException:
        for folder in owned:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    package.catalog.timeout_s = query_timeout_s
    write_scaffold(layout, package.catalog.names(), task=task)  # list document tables in solver.py too
    solver = SolverToolbox(layout, catalog=package.catalog, task=task)
    server = DataServer(_new_mcp(task_mode=True, allow_write=allow_write), package,
                        SessionToolboxes(package), solver, layout.root, owned)
    server.preload = Preload(package)
    gate = _CallGate(package.catalog.interrupt, query_timeout_s + CALL_GRACE_S,
                     {"run_solver": MAX_TIMEOUT_S + CALL_GRACE_S}, ready=server.preload.ready)
    _add_engine_tools(server, gate)
    for name in READ_TOOLS + (WRITE_TOOLS if allow_write else ()):
        _register(server.mcp, lambda: solver, solver.tool(name), _READ_ONLY if name in READ_TOOLS else _WRITES_SCRATCH,
                  gate)
    return server


@dataclass
class _CallGate:
    """Runs tool calls one at a time in a worker thread, each within a time limit.

    Waiting happens on the event loop (other requests keep being answered); a call past its
    limit gets the catalog interrupted and a `timeout` error, and the next call can start. A call
    made while the tables still load (`ready` not set) waits for them first; its limit starts after.
    """

    interrupt: Callable[[], object]
    limit_s: float
    limits: dict[str, float] = field(default_factory=dict)  # per tool, where different
    ready: threading.Event | None = None
    _locks: dict[int, asyncio.Lock] = field(default_factory=dict)  # one per event loop

    async def run(self, name: str, work_fn: Callable[[], tuple[str, bool, str]]) -> tuple[str, bool, str]:
        if self.ready is not None and not self.ready.is_set():
            await asyncio.to_thread(self.ready.wait)
        limit = self.limits.get(name, self.limit_s)
        loop = asyncio.get_running_loop()
        lock = self._locks.setdefault(id(loop), asyncio.Lock())
        deadline = loop.time() + limit
        try:
            async with asyncio.timeout_at(deadline):
                await lock.acquire()
        except TimeoutError:
            return (f"{name} waited {limit:g} s for another call to finish; try again.", False, "timeout")
        try:
            work = asyncio.ensure_future(asyncio.to_thread(work_fn))
            try:
                return await asyncio.wait_for(asyncio.shield(work), max(0.0, deadline - loop.time()))
            except TimeoutError:
                self.interrupt()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(work, STOP_WAIT_S)
                return (f"{name} did not finish within {limit:g} s and was stopped. Make it cheaper: filter "
                        "early, aggregate before joining, avoid cross joins.", False, "timeout")
        finally:
            lock.release()


class _DataMCP(MCPServer):
    """The MCP server whose own refusals (arguments that do not fit a tool's schema, a tool name
    it does not have) come back like every tool failure: an error result carrying the one JSON
    error shape, kind `retry`, instead of the library's raw validation text."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        _SESSION.set(_session_of(context))  # this call's task only: which session's results it uses
        tools = {tool.name: tool for tool in await self.list_tools()}
        if name not in tools:
            return _error_result("retry", unknown_tool(name, list(tools)))
        known = list((tools[name].input_schema or {}).get("properties", {}))
        unknown = [key for key in arguments or {} if key not in known]
        if unknown:  # pydantic would drop it and say only that the right one is missing
            return _error_result("retry", _unknown_arguments(name, unknown, known))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            return _error_result("retry", f"invalid arguments for {name}: {compact_validation(exc.__cause__)}")


def _unknown_arguments(tool: str, unknown: list[str], known: list[str]) -> str:
    """`invalid arguments for query: unknown argument 'sq' (did you mean 'sql'?); query takes: sql`."""
    said = []
    for key in unknown:
        near = difflib.get_close_matches(key, known, n=1, cutoff=0.5)
        said.append(f"unknown argument {key!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    takes = ", ".join(known) if known else "no arguments"
    return f"invalid arguments for {tool}: {'; '.join(said)}; {tool} takes: {takes}"


def _session_of(context: Any) -> str | None:
    """The HTTP session id of the request being served (None on stdio)."""
    try:
        request = context.request_context.request
    except (AttributeError, ValueError):
        return None
    headers = getattr(request, "headers", None)
    return headers.get(SESSION_HEADER) if headers is not None else None


def _error_result(kind: str, message: str) -> CallToolResult:
    body = json.dumps(error_record(kind, message), ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=body)], is_error=True)


def _new_mcp(*, task_mode: bool, allow_write: bool) -> MCPServer:
    if not task_mode:
        extra = ""
    elif allow_write:
        extra = (" This is a task: read_solver, edit_solver and run_solver work on solver.py in a scratch copy "
                 "(run_solver writes prediction.csv there); explore_data is the solver's own view of the tables.")
    else:
        extra = (" This is a task: read_solver shows solver.py (read-only mode; start the server with "
                 "--allow-write to edit and run it); explore_data is the solver's own view of the tables.")
    return _DataMCP(SERVER_NAME, version=__version__, instructions=render_prompt("mcp_instructions", task_tools=extra))


def _add_engine_tools(server: DataServer, gate: _CallGate) -> None:
    sessions = server.sessions
    for tool in sessions.default.tools:
        _register(server.mcp, lambda: sessions.get(_SESSION.get()), tool, _READ_ONLY, gate)


def _outcome(result: Any) -> tuple[str, bool, str]:
    return result.text, result.ok, result.kind


def _register(mcp: MCPServer, toolbox: Callable[[], Toolbox[Any]], tool: Tool[Any], annotations: ToolAnnotations,
              gate: _CallGate) -> None:
    """Expose one kit tool: its MCP parameters are the fields of its argument model; a result that
    is not ok comes back as an MCP error carrying the one JSON error shape. `toolbox()` picks the
    toolbox of the call's session, in the tool-call thread."""
    name = tool.name

    async def call(**kwargs: Any) -> CallToolResult:
        text, ok, kind = await gate.run(name, lambda: _outcome(toolbox().call(name, kwargs)))
        return CallToolResult(content=[TextContent(type="text", text=text)]) if ok else _error_result(kind, text)

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
