"""What passes between the scripted model and the faces that serve it (HTTP, transport)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .turns import Turn


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the model saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    key: str | None
    received_at: float
    preflight: bool = False
    """The preflight's one-token request (answered by the model itself, never by the script)."""


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, body bytes, content type and extra headers."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Pending:
    """A chat completion the model accepted: the face takes its turn (``next_turn``), waits its
    latency and delays, then sends ``reply``."""

    body: dict[str, Any]
    key: str | None
    preset: Turn | None = None
    """The turn already decided (the preflight's "OK"): no script or handler is asked."""


class Answerer(Protocol):
    """What a face needs of the model (``ScriptedModel``)."""

    latency_s: float

    def receive(self, method: str, path: str, headers: Mapping[str, str], raw: bytes) -> Reply | Pending: ...

    def next_turn(self, pending: Pending) -> Turn | str: ...

    def reply(self, body: dict[str, Any], turn: Turn | str) -> Reply: ...

    def client_left(self) -> None: ...
