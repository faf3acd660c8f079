"""Scripted turns: what the fake server answers to one request."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True)
class FakeCall:
    """One tool call in a scripted answer; ``arguments`` as a dict or as raw (possibly broken) text."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        """The ``arguments`` string exactly as the server will send it."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class Text:
    """An assistant text answer, optionally with reasoning in ``reasoning_content``."""

    content: str
    reasoning_content: str | None = None


@dataclass(frozen=True)
class ToolCalls:
    """One or more tool calls. ``content=None`` mimics servers that send null next to tool_calls."""

    calls: tuple[FakeCall, ...]
    content: str | None = None
    reasoning_content: str | None = None


@dataclass(frozen=True)
class HttpError:
    """An HTTP error status with optional Retry-After and body."""

    status: int
    retry_after: float | str | None = None
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Garbage:
    """A 200 answer whose body is not JSON (a misbehaving proxy)."""

    body: str = "<html>502 Bad Gateway</html>"
    content_type: str = "application/json"


@dataclass(frozen=True)
class Delay:
    """Wait, then answer ``then`` (a client with a short read timeout will have given up)."""

    seconds: float
    then: Turn = Text("")


Turn = Union[Text, ToolCalls, HttpError, Garbage, Delay]


def text(content: str, *, reasoning: str | None = None, think: str | None = None) -> Text:
    """Assistant text; ``reasoning`` goes to reasoning_content, ``think`` inline as <think>…</think>."""
    if think is not None:
        content = f"<think>{think}</think>{content}"
    return Text(content, reasoning)


def tool_call(
    name: str, args: dict[str, Any] | str | None = None, *, id: str | None = None,
    content: str | None = None, reasoning: str | None = None,
) -> ToolCalls:
    """A single tool call."""
    return ToolCalls((FakeCall(name, {} if args is None else args, id),), content, reasoning)


def tool_calls(
    calls: list[FakeCall | tuple[str, dict[str, Any] | str]], *, content: str | None = None,
    reasoning: str | None = None,
) -> ToolCalls:
    """Several tool calls in one answer; items are FakeCall or ``(name, args)`` pairs."""
    made = tuple(c if isinstance(c, FakeCall) else FakeCall(c[0], c[1]) for c in calls)
    return ToolCalls(made, content, reasoning)


def http_error(
    status: int, retry_after: float | str | None = None, body: Any = None,
    headers: dict[str, str] | None = None,
) -> HttpError:
    """An HTTP error; the default body is an OpenAI-shaped error object."""
    return HttpError(status, retry_after, body, tuple((headers or {}).items()))


def garbage(body: str = "<html>502 Bad Gateway</html>") -> Garbage:
    """A 200 answer with a non-JSON body."""
    return Garbage(body)


def delay(seconds: float, then: Turn | str | None = None) -> Delay:
    """Wait ``seconds`` before answering ``then`` (default: an empty text)."""
    if then is None:
        return Delay(seconds)
    return Delay(seconds, text(then) if isinstance(then, str) else then)
