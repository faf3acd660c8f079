"""One tool-call runner for every loop: parse and repair the model's arguments, run the tool (off
the event loop with a timeout, when one is set), trace the call and its result, and hand back the
text for the `role: "tool"` message.

Every model mistake (unknown tool, broken JSON, bad arguments, a slow call) comes back as text the
model can act on; any exception of ours (no named error: a ValueError too) is an internal error,
a "crash" outcome with its traceback in the trace, never told to the model as its mistake.

How a loop reacts around each call is two callbacks (`CallHooks`, as simonw/llm's
`BeforeCallSync`/`AfterCallSync`): `before_call` as a call is about to run, `after_call` with its
outcome, which it may annotate (how a cut result reads on, what to change when an error repeats,
how the call reads in a summary of older turns). A tool record only describes the tool.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from datasolver.clip import clip
from datasolver.llm import NULL_TRACE, ToolCall, TraceWriter, parse_tool_arguments, tool_message
from datasolver.toolkit.tool import Tool, Toolbox, unknown_tool_message

EVENT_TOOL_CRASH = "tool_crash"
CLIP_NOTE = "ask for fewer rows or columns"


@dataclass
class ToolOutcome:
    """What one call did: the text sent back, whether it succeeded, and how it was handled.

    The last three fields are the loop's reading of the outcome, set by its `after_call` hook."""

    call_id: str
    name: str
    text: str
    ok: bool
    kind: str  # "ok" | "retry" | "failed" | "unknown_tool" | "bad_arguments" | "timeout" | "crash"
    repairs: list[str]
    arguments: dict[str, Any] | str | None = None
    """The validated arguments (JSON-ready), or the raw text when they could not be read."""
    args: BaseModel | None = None
    """The validated arguments as the tool's model (None when they could not be read)."""
    value: Any = None
    """The tool's value for the program (ToolResult.value), e.g. a result handle or a final answer."""
    tool: Tool[Any] | None = field(default=None, repr=False, compare=False)
    """The tool called (None for a name that is not one)."""
    clip_note: str = CLIP_NOTE
    """How to see the rest when the text is cut to fit the history."""
    on_repeat: str = ""
    """What to change when this error comes back word for word ("": the loop's general advice)."""
    brief: str | None = None
    """The call's arguments in a few words for a summary of older turns (None: their JSON);
    "" leaves the call out (a summary shows what it read anyway)."""

    @property
    def refused(self) -> bool:
        """The tool ran and answered no (`retry`, `failed`: e.g. the data refused a query), as opposed to a
        call the runner stopped (unknown tool, bad arguments, timeout, crash)."""
        return self.kind in ("retry", "failed")

    @property
    def submits(self) -> bool:
        """The call ran the answer."""
        return self.tool is not None and self.tool.submits

    def message(self) -> dict[str, Any]:
        """The tool message for the history."""
        return tool_message(self.call_id, self.text)


def _no_reaction(*_: Any) -> None:
    return None


@dataclass(frozen=True)
class CallHooks:
    """How a loop reacts around each call; a tool record says nothing of it.

    `before_call(tool, call)`: the model's call (a `ToolCall`, the llm room's) is about to run (tool None for a name that is no tool).
    `after_call(tool, call, outcome)`: it ran; the hook may set the outcome's `clip_note`,
    `on_repeat` and `brief`."""

    before_call: Callable[[Tool[Any] | None, ToolCall], None] = _no_reaction
    after_call: Callable[[Tool[Any] | None, ToolCall, ToolOutcome], None] = _no_reaction


class ToolRunner:
    """Runs raw model tool calls against one toolbox, tracing each.

    `timeout_s`: seconds a call may take (plus the tool's own `timeout_grace_s`); None runs the
    call inline with no timeout. `seconds_left` (the task's time to its deadline, None without
    one) caps it, so that no call, and no sandboxed run a call starts (its tool's `prepare` gets the
    capped value), outlives the task. After a timeout the toolbox's `interrupt()` stops what it was
    running. `result_chars` clips long answers for the history. `hooks`: the loop's reactions.
    """

    def __init__(
        self,
        toolbox: Toolbox[Any],
        trace: TraceWriter = NULL_TRACE,
        *,
        hooks: CallHooks = CallHooks(),
        timeout_s: float | None = None,
        result_chars: int | None = None,
        seconds_left: Callable[[], float | None] | None = None,
    ) -> None:
        self.toolbox = toolbox
        self.trace = trace
        self.hooks = hooks
        self.timeout_s = timeout_s
        self._seconds_left = seconds_left
        self.result_chars = result_chars

    def call_timeout(self) -> float | None:
        """Seconds the next call may take: `timeout_s`, at most the time left to the deadline."""
        left = self._seconds_left() if self._seconds_left is not None else None
        if left is None:
            return self.timeout_s
        left = max(left, 0.0)
        return left if self.timeout_s is None else min(self.timeout_s, left)

    def parse(self, call: ToolCall) -> tuple[BaseModel | None, str | None, list[str]]:
        """(validated arguments, error text, repairs applied) for one raw call."""
        if call.name not in self.toolbox.names:
            return None, unknown_tool_message(call.name or "(unreadable tool call)", self.toolbox.names), []
        tool = self.toolbox.tool(call.name)
        parsed = parse_tool_arguments(call.arguments_raw, tool.args_model, tool_name=call.name)
        if not parsed.ok or parsed.value is None:
            return None, parsed.error or "Error: invalid arguments.", parsed.repairs
        args = parsed.value
        timeout = self.call_timeout()
        if tool.prepare is not None and timeout is not None:
            args = tool.prepare(args, timeout)
        return args, None, parsed.repairs

    async def run(self, call: ToolCall) -> ToolOutcome:
        """Execute one call and return its outcome (already traced)."""
        tool = self.toolbox.tool(call.name) if call.name in self.toolbox.names else None
        self.hooks.before_call(tool, call)
        args, error, repairs = self.parse(call)
        if args is None:
            kind = "unknown_tool" if tool is None else "bad_arguments"
            self._trace_call(call, call.arguments_raw, repairs, error)
            outcome = ToolOutcome(call.id, call.name, error or "", False, kind, list(repairs),
                                  arguments=call.arguments_raw, tool=tool)
            return self._finish(tool, call, outcome, 0.0)
        shown = args.model_dump(mode="json")
        self._trace_call(call, shown, repairs, None)
        started = time.monotonic()
        text, kind, value = await self._execute(call.name, args)
        if repairs:
            text += f"\n(note: your arguments were repaired: {'; '.join(repairs)}. Send valid JSON.)"
        outcome = ToolOutcome(call.id, call.name, text, kind == "ok", kind, list(repairs), arguments=shown,
                              args=args, value=value, tool=tool)
        return self._finish(tool, call, outcome, time.monotonic() - started)

    async def _execute(self, name: str, args: BaseModel) -> tuple[str, str, Any]:
        timeout = self.call_timeout()
        try:
            if timeout is None:
                result = self.toolbox.call(name, args)
            else:
                wait = timeout + self.toolbox.tool(name).timeout_grace_s
                try:
                    result = await asyncio.wait_for(asyncio.to_thread(self.toolbox.call, name, args), wait)
                except TimeoutError:
                    self.toolbox.interrupt()
                    return (f"Error: {name} did not finish within {wait:g} s and was stopped. "
                            "Make it cheaper: filter early, aggregate before joining, avoid cross joins.",
                            "timeout", None)
        except Exception as exc:  # an internal error (no named error): the run goes on, the trace
            self.trace.event(EVENT_TOOL_CRASH, name=name, error_type=type(exc).__name__,  # keeps the traceback
                             error=str(exc), traceback=traceback.format_exc())
            return (f"Error: {name} failed unexpectedly ({type(exc).__name__}: {str(exc)[:300]}). "
                    "Try a different approach.", "crash", None)
        return result.text, result.kind, result.value

    def _finish(self, tool: Tool[Any] | None, call: ToolCall, outcome: ToolOutcome, latency: float) -> ToolOutcome:
        self.hooks.after_call(tool, call, outcome)
        if self.result_chars is not None:
            outcome.text = clip(outcome.text, self.result_chars, note=outcome.clip_note)
        self.trace.tool_result(call.id, call.name, outcome.text, ok=outcome.ok, latency_s=round(latency, 3))
        return outcome

    def _trace_call(self, call: ToolCall, arguments: Any, repairs: list[str], error: str | None) -> None:
        self.trace.tool_call(call.id, call.name, arguments, repairs=repairs, error=error, via=call.via)
