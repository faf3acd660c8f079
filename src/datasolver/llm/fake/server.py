"""ScriptedServer: the scripted model (model.py) served over real HTTP on 127.0.0.1.

Threaded (one thread per connection), so concurrent requests are served in parallel. For tests
about HTTP itself (timeouts, disconnects, a server that serves one request at a time), the
interop tests, the benchmarks and ``datasolver demo``; tests about the agent answer at the
transport instead (``ScriptedModel.transport``).
"""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .exchange import Pending, ReceivedRequest, Reply
from .model import LLAMA_CPP_WORDING, OPENAI_WORDING, Handler, Router, Script, ScriptedModel, strict_violations
from .turns import Delay, Turn

__all__ = ["LLAMA_CPP_WORDING", "OPENAI_WORDING", "ReceivedRequest", "ScriptedServer", "strict_violations"]

_POLL_S = 0.01


class ScriptedServer(ScriptedModel):
    """A ``ScriptedModel`` (its script, handler and real-server behaviours) behind an HTTP server.

    ``one_at_a_time`` serves one completion at a time and, like llama.cpp, finishes a delayed
    answer after its client has gone; ``disconnects`` counts the clients that closed their
    connection while waiting for an answer.
    """

    def __init__(
        self,
        script: Script | None = None,
        handler: Handler | None = None,
        latency_s: float = 0.0,
        *,
        route: Router | None = None,
        model: str = "fake-model",
        strict: bool = True,
        context_window: int | None = None,
        wording: str = OPENAI_WORDING,
        report_window: str | None = None,
        one_at_a_time: bool = False,
        honor_max_tokens: bool = False,
        prefill_rate: float | None = None,
        api_key: str | None = None,
        models: Sequence[str] | None = None,
    ) -> None:
        super().__init__(script, handler, latency_s, route=route, model=model, strict=strict,
                         context_window=context_window, wording=wording, report_window=report_window,
                         honor_max_tokens=honor_max_tokens, prefill_rate=prefill_rate, api_key=api_key,
                         models=models)
        self._serial = threading.Lock() if one_at_a_time else None
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        """Bind a free port on 127.0.0.1 and serve in a background thread."""
        httpd = _Server(("127.0.0.1", 0), _RequestHandler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="ScriptedServer", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; pending delays are cut short."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (only while started)."""
        if self._httpd is None:
            raise RuntimeError("ScriptedServer is not running; use it as a context manager")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def connection(self) -> dict[str, Any]:
        """The ``LLMSettings`` fields that send a client's requests here: over HTTP."""
        return {"base_url": self.base_url}

    # -- serving (called from handler threads) ---------------------------------------------------

    def _serve(self, pending: Pending, connection: socket.socket) -> Reply:
        if self._serial is None:
            return self._answer(pending, connection)
        with self._serial:
            return self._answer(pending, connection)

    def _answer(self, pending: Pending, connection: socket.socket) -> Reply:
        turn: Turn | str = self.next_turn(pending)
        if self.latency_s > 0:
            self._stop.wait(self.latency_s)
        while isinstance(turn, Delay):
            self._wait_watching(turn.seconds, connection)
            turn = turn.then
        return self.reply(pending.body, turn)

    def _wait_watching(self, seconds: float, connection: socket.socket) -> None:
        """Wait (the answer is being "generated"), noting a client that closes meanwhile."""
        deadline = time.monotonic() + seconds
        gone = False
        while not self._stop.is_set() and (left := deadline - time.monotonic()) > 0:
            if gone:
                self._stop.wait(min(left, 0.05))
                continue
            try:
                readable, _, _ = select.select([connection], [], [], min(left, _POLL_S))
                if readable and connection.recv(1, socket.MSG_PEEK) == b"":
                    gone = True
            except (OSError, ValueError):
                gone = True
            if gone:
                self.client_left()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a client that gave up must not hold close() hostage
    request_queue_size = 128  # a burst of concurrent connects must not overflow the backlog
    owner: ScriptedServer


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, each answer waits ~40 ms for a
    # delayed ACK, which would distort latency-bound benchmarks.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the per-request stderr log."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._handle(b"")

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        self._handle(self.rfile.read(length) if length else b"")

    def _handle(self, raw: bytes) -> None:
        owner = self.server.owner
        got = owner.receive(self.command, self.path, dict(self.headers.items()), raw)
        self._send(owner._serve(got, self.connection) if isinstance(got, Pending) else got)

    def _send(self, reply: Reply) -> None:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and left; that is the scenario being simulated
