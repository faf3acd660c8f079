"""TraceWriter: one JSON line per event in <logs>/<task_id>/trace.jsonl, secrets scrubbed."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable
from dataclasses import asdict, is_dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from datasolver import safe_write, untrusted_json

from .constants import EVENT_REQUEST, EVENT_TOOL_CALL, EVENT_TOOL_RESULT, MIN_SECRET_LEN, SCRUBBED, TRACE_FILE_NAME
from .settings import redact_url

# Header-shaped secrets are scrubbed whatever key is configured.
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]+")
_SECRET_KEYS = re.compile(r"(?i)^(authorization|proxy-authorization|api[-_]?key|x-api-key)$")


class TraceWriter:
    """Appends JSON lines; safe to call from many threads or coroutines at once.

    ``TraceWriter(logs_dir, task_id)`` writes ``logs_dir/task_id/trace.jsonl``; without a task id
    a path ending in a suffix is the file itself, any other path is a directory. The folder
    given is taken as is; below it nothing is written through a link (`safe_write`), so a task
    id can never lead the trace out of `logs_dir`.
    """

    def __init__(
        self, path_or_dir: str | Path, task_id: str | None = None, secrets: Iterable[str | None] = ()
    ) -> None:
        base = Path(path_or_dir)
        if task_id is not None:
            self.path = base / task_id / TRACE_FILE_NAME
        elif base.suffix:
            self.path, base = base, base.parent
        else:
            self.path = base / TRACE_FILE_NAME
        self._base = base
        self.task_id = task_id
        self._secrets: list[str] = []
        self._lock = threading.Lock()
        self._seq = 0
        self._request_ids = 0
        # Delta encoding of request messages: (request_id, messages) of the last logged request.
        self._last_sent: tuple[int, list[dict[str, Any]]] = (0, [])
        self._last_tools: list[dict[str, Any]] | None = None
        for secret in secrets:
            self.add_secret(secret)

    def add_secret(self, secret: str | None) -> None:
        """Scrub this value from every later event (ignored when too short to match safely)."""
        if secret and len(secret) >= MIN_SECRET_LEN and secret not in self._secrets:
            with self._lock:
                self._secrets.append(secret)

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Write one event and return the record as written (scrubbed)."""
        record: dict[str, Any] = {"ts": _now_iso(), "event": kind}
        if self.task_id is not None:
            record["task_id"] = self.task_id
        record.update(fields)
        with self._lock:
            self._seq += 1
            record["seq"] = self._seq
            clean = self._scrub(_jsonable(record))
            line = json.dumps(clean, ensure_ascii=False, default=str)
            # Open per event: a crash loses nothing and no handle outlives the task.
            safe_write.append_text(self.path, line + "\n", base=self._base)
        return clean

    def new_request_id(self) -> int:
        """A request id unique within this trace (shared by every client writing to it)."""
        with self._lock:
            self._request_ids += 1
            return self._request_ids

    def request(
        self,
        request_id: int,
        tries: int,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Record a model request. Messages are delta-encoded: a 50-turn conversation would
        otherwise be written 50 times over. ``messages_base``/``messages_from`` say that the first
        ``messages_from`` messages equal those of request ``messages_base``; retries (``try`` > 1)
        repeat no messages. Full tool schemas are written when they change. ``attempt`` (the
        agent's attempt number) comes in ``fields`` when the caller has one."""
        fields["tools"] = [t.get("function", {}).get("name") for t in tools or []]
        if tries == 1:
            with self._lock:
                base_id, previous = self._last_sent
                if previous and len(previous) <= len(messages) and messages[: len(previous)] == previous:
                    fields["messages_base"] = base_id
                    fields["messages_from"] = len(previous)
                    fields["messages"] = messages[len(previous):]
                else:
                    fields["messages_from"] = 0
                    fields["messages"] = messages
                self._last_sent = (request_id, messages)
                if tools and tools != self._last_tools:
                    fields["tool_schemas"] = tools
                    self._last_tools = tools
        fields["messages_total"] = len(messages)
        fields["try"] = tries
        return self.event(EVENT_REQUEST, request_id=request_id, **fields)

    def tool_call(
        self, call_id: str, name: str, arguments: Any, *, repairs: list[str] | None = None,
        error: str | None = None, via: str = "native",
    ) -> dict[str, Any]:
        """Record a tool call as the agent is about to run it (parsed arguments, repairs applied);
        ``via`` is "text" for a call the model wrote in its content."""
        return self.event(
            EVENT_TOOL_CALL, call_id=call_id, name=name, arguments=arguments,
            repairs=list(repairs or []), error=error, via=via,
        )

    def tool_result(
        self, call_id: str, name: str, content: Any, *, ok: bool = True, latency_s: float | None = None
    ) -> dict[str, Any]:
        """Record what a tool returned to the model."""
        return self.event(
            EVENT_TOOL_RESULT, call_id=call_id, name=name, ok=ok, latency_s=latency_s, content=content
        )

    def read(self) -> list[dict[str, Any]]:
        """All events written so far (for tests and reports)."""
        return read_trace(self.path)[0]

    def _scrub(self, value: Any, key: str | None = None) -> Any:
        if key is not None and _SECRET_KEYS.match(key) and value not in (None, ""):
            return SCRUBBED
        if isinstance(value, str):
            for secret in self._secrets:
                value = value.replace(secret, SCRUBBED)
            # Substring tests first: each regex scans the whole text (~20 us for a long prompt),
            # and almost no text holds either pattern.
            if "bearer" in value.lower():
                value = _BEARER.sub(rf"\1 {SCRUBBED}", value)
            return redact_url(value) if "://" in value else value
        if isinstance(value, dict):
            return {k: self._scrub(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self._scrub(v) for v in value]
        return value


class NullTrace(TraceWriter):
    """A trace that keeps nothing: what runs without a logs folder (a person's `datasolver solve`,
    a test) gets this instead of None, so no caller asks whether there is a trace. Request ids
    still count up, so a client's ids stay unique."""

    def __init__(self) -> None:
        super().__init__(os.devnull)

    def add_secret(self, secret: str | None) -> None:
        return None  # nothing is written, so nothing is scrubbed

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {}

    def request(self, request_id: int, tries: int, messages: list[dict[str, Any]],
                tools: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
        return {}

    def read(self) -> list[dict[str, Any]]:
        return []


NULL_TRACE: TraceWriter = NullTrace()
"""The one shared null trace (a default argument; it writes nothing and holds no task)."""


def read_trace(path: str | Path, notes: list[str] | None = None) -> tuple[list[dict[str, Any]], int]:
    """(events, damaged lines) of a trace file; a line cut short by a killed run is counted, not fatal.

    The trace may come from someone else: a line that is not a JSON object, is nested too deeply
    or is huge counts as damaged, and why goes to `notes` when given. A missing, linked or
    non-regular file reads as empty (with a note)."""
    events: list[dict[str, Any]] = []
    damaged = 0
    try:
        for _, record, note in untrusted_json.object_lines(Path(path)):
            if record is None:
                damaged += 1
                if notes is not None:
                    notes.append(note)
            else:
                events.append(record)
    except FileNotFoundError:
        return [], 0
    except (OSError, untrusted_json.BadJSON) as exc:
        if notes is not None:
            notes.append(str(exc))
    return events, damaged


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _jsonable(value: Any) -> Any:
    """Turn models, dataclasses, tuples and paths into plain JSON shapes before scrubbing."""
    if isinstance(value, BaseModel):
        return _jsonable(value.model_dump(mode="json"))
    if callable(getattr(value, "as_dict", None)):  # Usage and friends (their locks do not copy)
        return _jsonable(value.as_dict())
    if is_dataclass(value) and not isinstance(value, type):
        return _jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)
