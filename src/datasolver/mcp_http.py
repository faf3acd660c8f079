"""How `datasolver mcp --http` is exposed: canonical loopback, or any other interface only with
`allow_remote`, a bearer token and Host/Origin checks; and how long its sessions live.

The bind host is normalised first (`LOCALHOST` → 127.0.0.1, `0:0:0:0:0:0:0:1` → ::1,
`::ffff:127.0.0.1` → 127.0.0.1); only 127.0.0.1 and ::1 count as loopback (127.0.0.2 does not:
another service may own it). The Host/Origin check (DNS rebinding) is ours on every bind, never
left to the library, which switched it on only for three exact host strings. A remote bind also
needs `Authorization: Bearer <token>` on every request.

Sessions: at most `max_sessions` at once (the library answers 503 past it), each closed after
`session_idle_s` without a request; `SessionWatch` tells the server when one ends so its result
handles are freed. Sessionless requests (MCP 2026-07-28) are answered 400: they carry nothing that
tells one client's results from another's, and MCP clients then fall back to the handshake.

Slow clients (`guarded_protocol`, `quiet_accept_errors`): uvicorn's h11 server has no deadline for
a request's headers, so half-sent requests were held forever and 1,500 of them ended the server
(the accept error's log line could not open a file: "Too many open files"). Here a request's
headers must arrive within `header_timeout_s` and its body within `body_timeout_s`; past
`max_connections` open connections, the oldest one still sending a request is closed (or, when
none is, the new one is answered 503); an accept that finds no file descriptor is one warning line
and accepting resumes, never the server's end.
"""

from __future__ import annotations

import errno
import hmac
import ipaddress
import json
import resource
import secrets
import socket
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from datasolver.errors import DatasolverError, error_record
from datasolver.settings import REQUIRED, check_settings, count, seconds, setting

TOKEN_ENV = "DATASOLVER_MCP_TOKEN"
SHUTDOWN_GRACE_S = 2  # open streams get this long to end after SIGINT/SIGTERM
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
CANONICAL_LOOPBACK = ("127.0.0.1", "::1")
DEFAULT_MAX_SESSIONS = 16  # open MCP sessions at once; one more is answered 503
DEFAULT_SESSION_IDLE_S = 600.0  # a session with no request for this long is closed (its results freed)
DEFAULT_MAX_CONNECTIONS = 256  # open HTTP connections at once (fewer when the file-descriptor limit is low)
DEFAULT_HEADER_TIMEOUT_S = 10.0  # a request's headers must arrive within this
DEFAULT_BODY_TIMEOUT_S = 30.0  # and its body within this after them
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
SESSIONLESS_REFUSED = ("this server keeps each client's results (@N) in its MCP session: connect with the "
                       "initialize handshake (protocol " + ", ".join(HANDSHAKE_PROTOCOL_VERSIONS) + ")")


class RemoteExposureError(DatasolverError):
    """A non-loopback --host without --allow-remote; the message says how to allow it."""


def normalize_host(host: str) -> str:
    """The bind host in one spelling: lower case, no brackets; `localhost` → 127.0.0.1; an address
    in its compressed form, an IPv4-mapped IPv6 address as the IPv4 address it maps."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return "127.0.0.1"
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return name
    mapped = getattr(ip, "ipv4_mapped", None)
    return str(mapped or ip)


def is_loopback(host: str) -> bool:
    """True only for canonical loopback once normalised: 127.0.0.1 and ::1 (and localhost)."""
    return normalize_host(host) in CANONICAL_LOOPBACK


def new_token() -> str:
    """A fresh bearer token (256 random bits, URL-safe)."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Exposure:
    """Where and how the HTTP server listens (`host` normalised); `token` None means no bearer
    check (loopback only); how many sessions may be open and how long one may idle."""

    host: str = setting(REQUIRED, "the address bound, normalised (`--host`)")
    port: int = count(REQUIRED, "the port bound (`--port`; 0: any free port)", least=0, most=65535)
    token: str | None = setting(None, "the bearer token every request must carry; None: no check (loopback "
                                "only)", repr=False)
    allowed_hosts: tuple[str, ...] = setting((), "more names accepted in Host and Origin (`--allowed-host`)")
    max_sessions: int = count(DEFAULT_MAX_SESSIONS, "open MCP sessions at once; one more is answered 503")
    session_idle_s: float = seconds(DEFAULT_SESSION_IDLE_S, "a session with no request for this long is closed "
                                    "(its results freed)")
    max_connections: int = count(DEFAULT_MAX_CONNECTIONS, "open HTTP connections at once (at most half the "
                                 "file-descriptor limit); past it the oldest one still sending a request is "
                                 "closed, else the new one gets 503")
    header_timeout_s: float = seconds(DEFAULT_HEADER_TIMEOUT_S, "a request's headers must arrive within this "
                                      "(from the connection or its first byte), else the connection is closed")
    body_timeout_s: float = seconds(DEFAULT_BODY_TIMEOUT_S, "a request's body must arrive within this after its "
                                    "headers, else the connection is closed")

    def __post_init__(self) -> None:
        check_settings(self)

    @property
    def remote(self) -> bool:
        return not is_loopback(self.host)

    def transport_security(self) -> TransportSecuritySettings:
        """Host/Origin rules for every bind: loopback names (and --allowed-host names) on loopback;
        this machine's names too on a remote bind."""
        names = set(LOOPBACK_NAMES) | set(self.allowed_hosts)
        if self.remote:
            names |= set(_machine_names(self.host))
        hosts = [_host_form(n) for n in sorted(names)]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=hosts + [f"{h}:*" for h in hosts],
            allowed_origins=[f"{scheme}://{h}{port}" for h in hosts for scheme in ("http", "https")
                             for port in ("", ":*")],
        )


class ListenError(DatasolverError):
    """The HTTP server cannot listen where it was asked to."""


class PortInUse(ListenError):
    """The port asked for is taken: said as `Error: port N is in use`, never uvicorn's `[Errno 98]`."""


def listen_socket(exposure: Exposure) -> socket.socket:
    """The server's listening socket, bound here (as uvicorn binds: SO_REUSEADDR) so that a taken
    port is one clear error and the URL is known once it listens; uvicorn serves on it."""
    family = socket.AF_INET6 if ":" in exposure.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((exposure.host, exposure.port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(f"port {exposure.port} is in use on {exposure.host}: stop what listens there, or "
                            "choose another --http PORT") from None
        raise ListenError(f"cannot listen on {exposure.host} port {exposure.port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket, path: str = "/mcp") -> str:
    """The URL a client uses to reach the server listening on `sock`."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"


def plan_exposure(host: str, port: int, *, allow_remote: bool, token: str | None,
                  allowed_hosts: Iterable[str] = (), max_sessions: int = DEFAULT_MAX_SESSIONS,
                  session_idle_s: float = DEFAULT_SESSION_IDLE_S) -> tuple[Exposure, bool]:
    """The exposure for a bind, and whether its token was generated here (so it must be shown).

    Canonical loopback: a token is used only when given. Anything else (127.0.0.2 included):
    refused without `allow_remote`; with it, a bearer token is required, generated when not given.
    """
    bind = normalize_host(host)
    if not is_loopback(bind) and not allow_remote:
        why = " (only 127.0.0.1 and ::1 count as loopback)" if _loopback_range(bind) else ""
        raise RemoteExposureError(
            f"--host {host} would serve the data beyond this machine's own loopback{why}; pass --allow-remote "
            f"to do so (every request then needs a bearer token: --token, --token-file, ${TOKEN_ENV}, or one "
            "generated and printed now)")
    generated = False
    if not is_loopback(bind) and not token:
        token, generated = new_token(), True
    return Exposure(bind, port, token or None, tuple(allowed_hosts), max_sessions, session_idle_s), generated


def _loopback_range(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BearerAuth:
    """ASGI middleware: HTTP requests without `Authorization: Bearer <token>` get 401."""

    def __init__(self, app: object, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: dict, receive: object, send: object) -> None:
        if scope.get("type") == "http" and not self._authorized(scope):
            body = json.dumps(error_record("unauthorized", "missing or wrong bearer token")).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="datasolver"'),
                (b"content-length", str(len(body)).encode()),
            ]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)  # type: ignore[operator]

    def _authorized(self, scope: dict) -> bool:
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)
        return False


class SessionWatch:
    """ASGI middleware: refuses sessionless (2026-07-28) requests, and notices when an MCP session
    ends to call `on_end(session_id)`.

    A session ends with the client's DELETE, when the library answers 404 for it (it forgot the
    session: its own idle timeout), or after `idle_s` with no request in flight (`sweep`). The
    library keeps the sessions; this only lets the server free what it holds per session.
    """

    def __init__(self, app: object, on_end: Callable[[str], object], idle_s: float) -> None:
        self.app = app
        self.on_end = on_end
        self.idle_s = idle_s
        self._busy: dict[str, int] = {}
        self._seen: dict[str, float] = {}

    async def __call__(self, scope: dict, receive: object, send: Callable) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)  # type: ignore[operator]
            return
        version = _header(scope, VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            body = json.dumps({"jsonrpc": "2.0", "id": None,
                               "error": {"code": -32600, "message": SESSIONLESS_REFUSED}}).encode()
            await send({"type": "http.response.start", "status": 400, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        session = _header(scope, SESSION_HEADER)
        if session is None:
            await self.app(scope, receive, send)  # type: ignore[operator]
            return
        status = 0

        async def watched(message: dict) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = message["status"]
            await send(message)

        self._busy[session] = self._busy.get(session, 0) + 1
        self._seen[session] = time.monotonic()
        try:
            await self.app(scope, receive, watched)  # type: ignore[operator]
        finally:
            self._busy[session] -= 1
            self._seen[session] = time.monotonic()
            if status == 404 or (scope.get("method") == "DELETE" and 200 <= status < 300):
                self.end(session)

    def sweep(self, now: float | None = None) -> None:
        """End every session idle (nothing in flight) for longer than `idle_s`."""
        now = time.monotonic() if now is None else now
        for session, seen in list(self._seen.items()):
            if not self._busy.get(session) and now - seen > self.idle_s:
                self.end(session)

    def end(self, session: str) -> None:
        if self._seen.pop(session, None) is not None and not self._busy.get(session):
            self._busy.pop(session, None)
        self.on_end(session)


def _header(scope: dict, name: str) -> str | None:
    wanted = name.encode()
    for key, value in scope.get("headers", []):
        if key.lower() == wanted:
            return value.decode("latin-1")
    return None


def _machine_names(bind: str) -> list[str]:
    names = list(LOOPBACK_NAMES)
    if bind not in ("0.0.0.0", "::", ""):
        names.append(bind)
    for name in (socket.gethostname(), socket.getfqdn()):
        names.append(name)
        try:
            names += socket.gethostbyname_ex(name)[2]
        except OSError:
            pass
    return names


def _host_form(name: str) -> str:
    """How a name appears in a Host header (IPv6 addresses in brackets)."""
    try:
        if ipaddress.ip_address(name).version == 6:
            return f"[{name}]"
    except ValueError:
        pass
    return name


def connection_cap(wanted: int) -> int:
    """`wanted`, lowered to half this process's file-descriptor limit (less 64 for its own files):
    connections must never use up the descriptors the server needs for anything else."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(8, min(wanted, (soft - 64) // 2))


def quiet_accept_errors(loop: Any, context: dict) -> None:
    """An asyncio exception handler: an accept that finds no file descriptor (EMFILE, ENFILE,
    ENOBUFS, ENOMEM; asyncio then pauses accepting for a second) is one plain warning line, written
    without opening anything; whatever else goes to asyncio's own handler, which may not end the
    server either."""
    exc = context.get("exception")
    if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
        now = time.monotonic()
        if now - _LAST_ACCEPT_WARNING[0] > 10:
            _LAST_ACCEPT_WARNING[0] = now
            print(f"warning: no file descriptor to accept a connection ({exc.strerror}); new connections wait",
                  file=sys.stderr, flush=True)
        return
    try:
        loop.default_exception_handler(context)
    except Exception:  # a handler that fails (its log line cannot open a file) must not end the server
        pass


_LAST_ACCEPT_WARNING = [0.0]


def guarded_protocol(exposure: Exposure) -> type:
    """uvicorn's h11 protocol with read deadlines and a connection cap (see the module's docstring)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    cap = connection_cap(exposure.max_connections)
    finished = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)
    refusal = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"

    class GuardedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._deadline: Any = None  # the armed timer (asyncio.TimerHandle)
            self._phase = ""  # "headers" or "body" while a request is being read, else ""
            self._since = 0.0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._read("headers")
            if len(self.connections) > cap:
                waiting = [c for c in self.connections if c is not self and getattr(c, "_phase", "")]
                victim = min(waiting, key=lambda c: c._since) if waiting else None
                if victim is not None:
                    victim._drop()
                else:
                    transport.write(refusal)
                    self._drop()

        def data_received(self, data: bytes) -> None:
            if not self._phase and self.conn.their_state is h11.IDLE:
                self._read("headers")  # the first byte of the next request on a kept-alive connection
            super().data_received(data)
            state = self.conn.their_state
            if state is h11.SEND_BODY and self._phase == "headers":
                self._read("body")
            elif state in finished:
                self._stop_reading()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_reading()
            super().connection_lost(exc)

        def _read(self, phase: str) -> None:
            self._stop_reading()
            self._phase, self._since = phase, time.monotonic()
            limit = exposure.header_timeout_s if phase == "headers" else exposure.body_timeout_s
            self._deadline = self.loop.call_later(limit, self._drop)

        def _stop_reading(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline, self._phase = None, ""

        def _drop(self) -> None:
            self._stop_reading()
            if not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol
