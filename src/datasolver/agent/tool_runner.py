"""Run one model tool call: parse and repair its arguments, execute it off the event loop with a
timeout, trace it, and turn the outcome into the `role: "tool"` message for the history.

Every model mistake (unknown tool, broken JSON, bad arguments, a slow query) comes back as text
the model can act on; nothing here raises for model misbehaviour.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from datasolver.agent.limits import Limits
from datasolver.llm import ToolCall, TraceWriter, parse_tool_arguments, tool_message, unknown_tool_message
from datasolver.solver import SolverToolbox

RUN_SOLVER = "run_solver"
# run_solver is killed by its sandbox at its own timeout; we wait this much longer for the report.
SANDBOX_GRACE_S = 30
EVENT_TOOL_CRASH = "tool_crash"


@dataclass
class ToolOutcome:
    """What one call did: the text sent back, whether it succeeded, and how it was handled."""

    call_id: str
    name: str
    text: str
    ok: bool
    kind: str  # "ok" | "retry" | "failed" | "unknown_tool" | "bad_arguments" | "timeout" | "crash"
    repairs: list[str]

    def message(self) -> dict[str, Any]:
        """The tool message for the history."""
        return tool_message(self.call_id, self.text)


class ToolRunner:
    """The four solver tools of one task, callable with raw model tool calls."""

    def __init__(
        self,
        toolbox: SolverToolbox,
        limits: Limits,
        trace: TraceWriter | None = None,
        interrupt: Callable[[], None] | None = None,
    ) -> None:
        self.toolbox = toolbox
        self.limits = limits
        self.trace = trace
        self._interrupt = interrupt  # stops a runaway DuckDB query after a timeout

    async def run(self, call: ToolCall) -> ToolOutcome:
        """Execute one call and return its outcome (already traced)."""
        if call.name not in self.toolbox.names:
            text = unknown_tool_message(call.name or "(unreadable tool call)", self.toolbox.names)
            self._trace_call(call, call.arguments_raw, [], text)
            return self._finish(call, text, False, "unknown_tool", [], 0.0)
        parsed = parse_tool_arguments(call.arguments_raw, self.toolbox.args_model(call.name), tool_name=call.name)
        if not parsed.ok or parsed.value is None:
            self._trace_call(call, call.arguments_raw, parsed.repairs, parsed.error)
            return self._finish(call, parsed.error or "Error: invalid arguments.", False, "bad_arguments", parsed.repairs, 0.0)
        args = self._bounded(call.name, parsed.value)
        self._trace_call(call, args.model_dump(mode="json"), parsed.repairs, None)
        started = time.monotonic()
        text, ok, kind = await self._execute(call.name, args)
        if parsed.repairs:
            text += f"\n(note: your arguments were repaired: {'; '.join(parsed.repairs)}. Send valid JSON.)"
        return self._finish(call, text, ok, kind, parsed.repairs, time.monotonic() - started)

    def _bounded(self, name: str, args: BaseModel) -> BaseModel:
        """run_solver's own timeout may not exceed the tool timeout."""
        if name == RUN_SOLVER and getattr(args, "timeout", 0) > self.limits.tool_timeout_s:
            return args.model_copy(update={"timeout": self.limits.tool_timeout_s})
        return args

    async def _execute(self, name: str, args: BaseModel) -> tuple[str, bool, str]:
        wait = self.limits.tool_timeout_s + (SANDBOX_GRACE_S if name == RUN_SOLVER else 0)
        try:
            result = await asyncio.wait_for(asyncio.to_thread(self.toolbox.call, name, args), wait)
        except TimeoutError:
            if self._interrupt is not None:
                self._interrupt()
            return (
                f"Error: {name} did not finish within {wait} s and was stopped. "
                "Make it cheaper: filter early, aggregate before joining, avoid cross joins.",
                False,
                "timeout",
            )
        except Exception as exc:  # a tool bug must not end the task; the trace keeps the traceback
            if self.trace is not None:
                self.trace.event(EVENT_TOOL_CRASH, name=name, error_type=type(exc).__name__,
                                 error=str(exc), traceback=traceback.format_exc())
            return (
                f"Error: {name} failed unexpectedly ({type(exc).__name__}: {str(exc)[:300]}). "
                "Try a different approach.",
                False,
                "crash",
            )
        return result.text, result.ok, result.kind

    def _clip(self, text: str) -> str:
        limit = self.limits.tool_result_chars
        if len(text) <= limit:
            return text
        return text[:limit] + f"\n… ({len(text) - limit} more characters cut; ask for fewer rows or columns)"

    def _finish(
        self, call: ToolCall, text: str, ok: bool, kind: str, repairs: list[str], latency: float
    ) -> ToolOutcome:
        text = self._clip(text)
        if self.trace is not None:
            self.trace.tool_result(call.id, call.name, text, ok=ok, latency_s=round(latency, 3))
        return ToolOutcome(call.id, call.name, text, ok, kind, list(repairs))

    def _trace_call(self, call: ToolCall, arguments: Any, repairs: list[str], error: str | None) -> None:
        if self.trace is not None:
            self.trace.tool_call(call.id, call.name, arguments, repairs=repairs, error=error)
