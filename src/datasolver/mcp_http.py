"""How `datasolver mcp --http` is exposed: loopback as it always was; any other interface only
with `allow_remote`, a bearer token and Host/Origin checks.

On loopback the MCP library already refuses foreign Host and Origin headers (DNS rebinding). A
non-loopback bind has no such default, so here every request must carry `Authorization: Bearer
<token>` and a Host (and, from browsers, an Origin) naming this machine or an allowed name.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from mcp.server.transport_security import TransportSecuritySettings

from datasolver.errors import DatasolverError, error_record

TOKEN_ENV = "DATASOLVER_MCP_TOKEN"
SHUTDOWN_GRACE_S = 2  # open streams get this long to end after SIGINT/SIGTERM
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


class RemoteExposureError(DatasolverError):
    """A non-loopback --host without --allow-remote; the message says how to allow it."""


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    name = host.strip("[]")
    if name.lower() in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    """A fresh bearer token (256 random bits, URL-safe)."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Exposure:
    """Where and how the HTTP server listens; `token` None means no bearer check (loopback only)."""

    host: str
    port: int
    token: str | None = None
    allowed_hosts: tuple[str, ...] = ()

    @property
    def remote(self) -> bool:
        return not is_loopback(self.host)

    def transport_security(self) -> TransportSecuritySettings | None:
        """Host/Origin rules for a remote bind; None keeps the library's loopback defaults."""
        if not self.remote:
            return None
        names = sorted(set(_machine_names(self.host)) | set(self.allowed_hosts))
        hosts = [_host_form(n) for n in names]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=hosts + [f"{h}:*" for h in hosts],
            allowed_origins=[f"{scheme}://{h}{port}" for h in hosts for scheme in ("http", "https")
                             for port in ("", ":*")],
        )


def plan_exposure(host: str, port: int, *, allow_remote: bool, token: str | None,
                  allowed_hosts: Iterable[str] = ()) -> tuple[Exposure, bool]:
    """The exposure for a bind, and whether its token was generated here (so it must be shown).

    Loopback: unchanged (a token is used only when given). Anything else: refused without
    `allow_remote`; with it, a bearer token is required, generated when not given.
    """
    if not is_loopback(host) and not allow_remote:
        raise RemoteExposureError(
            f"--host {host} would serve the data to other machines; pass --allow-remote to do so "
            f"(every request then needs a bearer token: --token, ${TOKEN_ENV}, or one generated and printed now)")
    generated = False
    if not is_loopback(host) and not token:
        token, generated = new_token(), True
    return Exposure(host, port, token or None, tuple(allowed_hosts)), generated


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
