"""One attempt of the Solver Agent: a tool-calling loop in three named steps.

    prepare_request  compact the history when it passes the token budget
    call_model       one chat request (the client retries 429/5xx/timeouts itself)
    run_tools        execute every tool call of the answer, in order

repeated until the model answers without a tool call, the request cap or the deadline is hit,
or the model endpoint fails for good. Model misbehaviour ends an attempt; it never raises.
A reply cut off by the output token limit (finish_reason "length", common while thinking) is
not an answer: the model is told so and the loop goes on, a few times per attempt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from datasolver.agent.compaction import compact
from datasolver.agent.conversation import Conversation
from datasolver.agent.limits import Limits
from datasolver.agent.prompts import render_prompt
from datasolver.agent.text_calls import extract_text_tool_calls
from datasolver.agent.tokens import estimate_tools_tokens
from datasolver.llm import (
    ChatResult,
    LLMClient,
    LLMContextLengthError,
    LLMError,
    ToolCall,
    TraceWriter,
    Usage,
    assistant_message,
    user_message,
)
from datasolver.toolkit import ToolRunner

# Why an attempt ended.
ANSWERED = "answered"  # the model replied without a tool call
REQUEST_CAP = "request_cap"
DEADLINE = "deadline"
MODEL_ERROR = "model_error"  # the endpoint failed after the client's retries (an exception)

EVENT_COMPACTION = "compaction"
EVENT_TEXT_TOOL_CALLS = "text_tool_calls"
EVENT_CUT_OFF = "cut_off"
CUT_OFF = "length"  # the finish_reason of a reply stopped by the output token limit


@dataclass
class AttemptResult:
    """How one attempt went. ``error`` is set when it ended with an exception."""

    number: int
    ended: str = ""
    requests: int = 0
    tool_calls: int = 0
    error: str | None = None
    final_text: str = ""
    compactions: int = 0
    cut_offs: int = 0
    tool_kinds: dict[str, int] = field(default_factory=dict)  # outcome kind → count

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AttemptRun:
    """What every step of one attempt needs."""

    client: LLMClient
    runner: ToolRunner
    tools: list[dict[str, Any]]
    limits: Limits
    solver_view: Callable[[], Awaitable[str]]  # current solver.py as read_solver shows it
    usage: Usage
    trace: TraceWriter | None = None
    chat_options: dict[str, Any] = field(default_factory=dict)  # extra keywords for client.chat

    def event(self, kind: str, **fields: Any) -> None:
        if self.trace is not None:
            self.trace.event(kind, **fields)


async def run_attempt(number: int, conv: Conversation, run: AttemptRun) -> AttemptResult:
    """Loop until the model stops calling tools or a limit ends the attempt."""
    state = AttemptResult(number)
    tools_tokens = estimate_tools_tokens(run.tools)
    while True:
        if state.requests >= run.limits.max_requests_per_attempt:
            state.ended = REQUEST_CAP
            return state
        if run.limits.expired():
            state.ended = DEADLINE
            return state
        await prepare_request(conv, run, state, tools_tokens)
        try:
            result = await call_model(conv, run, state)
        except LLMError as exc:
            state.ended, state.error = MODEL_ERROR, f"{type(exc).__name__}: {exc}"
            return state
        except TimeoutError:  # asyncio.timeout() at the task deadline cancelled the request
            state.ended = DEADLINE
            return state
        calls = record_answer(conv, result, run, state)
        if not calls and result.finish_reason == CUT_OFF and state.cut_offs < run.limits.cut_off_retries:
            state.cut_offs += 1
            run.event(EVENT_CUT_OFF, attempt=number, request_id=result.request_id)
            conv.append(user_message(render_prompt("cut_off")))
            continue
        if not calls:
            state.ended, state.final_text = ANSWERED, result.content
            return state
        await run_tools(conv, calls, run, state)


async def prepare_request(conv: Conversation, run: AttemptRun, state: AttemptResult, tools_tokens: int) -> None:
    """Step 1: compact older turns when the conversation is over the token budget."""
    budget = run.limits.context_token_budget
    if conv.estimated_tokens(tools_tokens) <= budget:
        return
    await _compact(conv, run, state, forced=False)
    if conv.estimated_tokens(tools_tokens) > budget:  # the latest results alone are too big
        await _compact(conv, run, state, forced=True)


async def call_model(conv: Conversation, run: AttemptRun, state: AttemptResult) -> ChatResult:
    """Step 2: one request; on a context-length error compact hard and try once more."""
    for retry_after_overflow in (False, True):
        state.requests += 1
        sent_len = len(conv.messages)
        try:
            async with asyncio.timeout(run.limits.seconds_left()):
                result = await run.client.chat(conv.messages, run.tools, **run.chat_options)
        except LLMContextLengthError as exc:
            run.usage.add(requests=0, retries=exc.retries_taken)
            can_retry = not retry_after_overflow and state.requests < run.limits.max_requests_per_attempt
            if not can_retry or not await _compact(conv, run, state, forced=True):
                raise
            continue
        except LLMError as exc:
            run.usage.add(requests=0, retries=exc.retries_taken)
            raise
        run.usage.merge(result.usage)
        run.usage.add(requests=0, retries=result.retries_taken)
        conv.note_reported(result.usage.prompt_tokens, sent_len)
        return result
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def record_answer(conv: Conversation, result: ChatResult, run: AttemptRun, state: AttemptResult) -> list[ToolCall]:
    """Append the answer to the history; return its tool calls (native, else written as text)."""
    content, calls = result.content, list(result.tool_calls)
    if not calls:
        content, calls = extract_text_tool_calls(content, start=state.tool_calls + 1)
        if calls:
            run.event(EVENT_TEXT_TOOL_CALLS, request_id=result.request_id, names=[c.name for c in calls])
    conv.append(assistant_message(content, calls))
    return calls


async def run_tools(conv: Conversation, calls: list[ToolCall], run: AttemptRun, state: AttemptResult) -> None:
    """Step 3: run the calls in order (an edit then a run must see each other) and append results."""
    for call in calls:
        outcome = await run.runner.run(call)
        state.tool_calls += 1
        state.tool_kinds[outcome.kind] = state.tool_kinds.get(outcome.kind, 0) + 1
        conv.append(outcome.message())


async def _compact(conv: Conversation, run: AttemptRun, state: AttemptResult, *, forced: bool) -> bool:
    view = await run.solver_view()
    tail_chars = max(1_000, run.limits.tool_result_chars // 4) if forced else None
    report = compact(conv, view, findings_chars=run.limits.findings_chars, tail_chars=tail_chars, forced=forced)
    if report is None:
        return False
    state.compactions += 1
    run.event(EVENT_COMPACTION, attempt=state.number, **asdict(report))
    return True
