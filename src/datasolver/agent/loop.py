"""One attempt of the Solver Agent: a tool-calling loop in three named steps.

    prepare_request  compact the history when it passes the token budget
    call_model       one chat request (the client retries 429/5xx/timeouts itself)
    run_tools        execute every tool call of the answer, in order

repeated until the model answers without a tool call (once sent back when its latest run of the
answer reported failed answer checks), the request cap, the task's token budget
or the deadline is hit, or the model endpoint fails for good. Model misbehaviour ends an attempt;
it never raises. A reply cut off by the output token limit (finish_reason "length", common while
thinking) is not an answer: the model is told so and the loop goes on, a few times per attempt.
Nor is a reply with no tool call while nothing is submitted: when it wrote an SQL query (a ```sql
block, `run_sql("…")` in code) the query is tested and run for the model as if it had called the
tools; anything else (prose, other code) is sent back once, naming the tool to use. While a call
is expected, a model that does not think gets a capped reply length. A context-length 400 is
never re-sent unchanged: the history shrinks by at least the ratio the error states, or the
attempt ends naming both numbers.

Three rules keep the loop converging (issue 46):

    repeated query   a query the model sent before (`same_query`: spacing, case and a final semicolon
                     aside) is not run again: the model gets the earlier result with a note naming
                     what to change (the table or join path after an error, the filter value after no
                     rows), and the round counts as no progress
    null call        a call with no name and no arguments (`is_null_call`) is dropped: a reply of only
                     such calls is a reply without a call; a reply that writes a tool result again has
                     its written query read from its own text, never from the echo
    stall            `Limits.stall_rounds` rounds in a row without progress (`made_progress`: no new
                     query with rows, no answer check newly passed, no other new successful call; a
                     reply without a call is no progress) end the attempt as `stalled`: the solve then
                     publishes the best candidate by the checks (`datasolver run` turns it on)

Where the program knows a repair it does it, instead of asking the model again: a query the model sent
that failed or found nothing (an explore_data query, a written query adopted, the query of solver.py
when its run failed or found nothing) gets the task-stage rules the direct step applies (`data/rules/`,
`docs/rules.md`), run read-only within a small bound (`offer_rewrite`, the tools' room's
`RewriteOffers`): the first rewrite that returns rows is appended to the tool result (rule, reason, SQL,
rows, what to do), each rewrite run is an `EVENT_RULE_REWRITE` event, and a repeat of the query gets
the earlier result with that rewrite.

The loop names no tool: how it reacts to one tool's calls is the tools' room's two callbacks
around each call (`toolkit.CallHooks`, run by the ToolRunner: they start what the tools want warm
and annotate each outcome with how a cut result reads on, what to change when its error repeats,
how the call reads in the findings), whether a call runs the answer is on the tool (`submits`), and
what it found is in what it returns (a QueryResult with rows, a CheckReport); the calls a written
query stands for come from the tools' room too (`AttemptRun.written_query`).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from datasolver.agent.compaction import compact
from datasolver.agent.conversation import Conversation
from datasolver.agent.governor import REPEATS_TO_STOP, REPEATS_TO_WARN, must_submit_reason, repetition_note
from datasolver.agent.limits import NO_DEADLINE, Deadline, Limits
from datasolver.agent.state import AttemptResult, SentQuery, SolveState
from datasolver.agent.prompts import render_prompt
from datasolver.agent.tokens import estimate_tools_tokens
from datasolver.clip import clip
from datasolver.llm import (
    ChatResult,
    LLMClient,
    LLMContextLengthError,
    LLMError,
    NULL_TRACE,
    ToolCall,
    TraceWriter,
    Usage,
    assistant_message,
    user_message,
)
from datasolver.llm.text_calls import ID_PREFIX, is_null_call, query_key, without_echoed_results, written_query
from datasolver.llm.window import reply_tokens
from datasolver.data import QueryResult
from datasolver.data.rules.offer import EVENT_REWRITE_OFFERED, EVENT_RULE_REWRITE, beside_result
from datasolver.solver.answer_checks import CheckReport
from datasolver.solver.tools import OfferedRewrite, WrittenQueryCalls
from datasolver.toolkit import ToolOutcome, ToolRunner

# Why an attempt ended.
ANSWERED = "answered"  # the model replied without a tool call
REQUEST_CAP = "request_cap"
DEADLINE = "deadline"
MODEL_ERROR = "model_error"  # the endpoint failed after the client's retries (an exception)
TOKEN_BUDGET = "token_budget"  # the task's token budget is spent
CONTEXT_OVERFLOW = "context_overflow"  # the request cannot be made to fit the server's window
REPEATED_ERROR = "repeated_error"  # the same tool error REPEATS_TO_STOP times in a row
STALLED = "stalled"  # Limits.stall_rounds rounds in a row without progress
REPEATED_QUERY = "repeated_query"  # the kind of an outcome answered from a query's earlier result

# Trace events of the loop (the strings are what trace.jsonl holds: replays and reports read them).
EVENT_COMPACTION = "compaction"
EVENT_TEXT_TOOL_CALLS = "text_tool_calls"
EVENT_CUT_OFF = "cut_off"
EVENT_NO_CALL_SENT_BACK = "sent_back"  # a reply with neither a tool call nor an answer, sent back
EVENT_CONTEXT_SHRINK = "context_shrink"
EVENT_CHECKS_SENT_BACK = "send_back"  # the model stopped on an answer with failed checks, sent back
EVENT_ANSWER_CHECKS = "answer_checks"
EVENT_MUST_SUBMIT = "must_submit"
EVENT_ERROR_REPEATS = "repeated_error"  # a tool error seen REPEATS_TO_WARN times or more: the model is told
EVENT_QUERY_ADOPTED = "query_adopted"
EVENT_REPEATED_QUERY = "repeated_query"  # a query sent before, answered from its earlier result
EVENT_NULL_CALLS = "null_calls"  # calls that call nothing, dropped from a reply
EVENT_STALLED = "stalled"  # the attempt stopped improving
VIA_WRITTEN = "written"  # a call made for the model from the query its reply wrote (tool_call events' `via`)
CUT_OFF = "length"  # the finish_reason of a reply stopped by the output token limit
# After a context-length 400, aim this far below the stated ratio (our estimate is not the
# server's tokenizer).
SHRINK_MARGIN = 0.97
_SQL_BLOCK = re.compile(r"```\s*sql\b|\bSELECT\b[\s\S]*\bFROM\b", re.IGNORECASE)
_CODE_BLOCK = re.compile(r"```")
_TYPED_TABLE = re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE)


class ContextOverflow(Exception):
    """The request cannot be made small enough for the server's context window."""


# What a repeat of a query should change, by how the query went the first time.
CHANGE_AFTER_ERROR = ("change the table or the join path: the column the error names may live in another "
                      "table (join that table by its key), or spell the name the error shows")
CHANGE_AFTER_NO_ROWS = ("change a filter value (use a value that exists in that column, as the result says) or "
                        "drop the filter that empties the result")
CHANGE_TO_REWRITE = ("take the program's rewrite shown below, which returns rows: put it into solver.py and run it "
                     "if its rows answer the question; else change the table, the join path or a filter value")
CHANGE_AFTER_ROWS = ("if these rows do not answer the question, change the table, the join path or a filter "
                     "value; if they do, put the query into solver.py and run it")


@dataclass(frozen=True)
class AttemptRun:
    """What every step of one attempt reads (its deps, built once per solve from the `TaskRun`), and
    the solve's one mutable `SolveState` beside them, as pydantic-ai's run context carries deps and state."""

    client: LLMClient
    runner: ToolRunner
    tools: list[dict[str, Any]]
    limits: Limits
    solver_view: Callable[[], Awaitable[str]]  # current solver.py as the model is shown it
    usage: Usage
    trace: TraceWriter = NULL_TRACE
    chat_options: dict[str, Any] = field(default_factory=dict)  # extra keywords for client.chat
    has_prediction: Callable[[], bool] = lambda: False  # whether prediction.csv is written
    written_query: Callable[[str], WrittenQueryCalls] | None = None  # the calls a reply's written SQL stands for
    sent_query: Callable[[ToolCall], str | None] | None = None  # the SQL a call sends to the data, if any
    offer: Callable[[ToolCall, ToolOutcome], OfferedRewrite | None] | None = None
    """The program's rewrite of a call's query that failed or found nothing (`solver.tools.RewriteOffers`)."""
    started: float = field(default_factory=time.monotonic)  # when solving the task began
    deadline: Deadline = NO_DEADLINE  # the task's (`TaskRun.deadline`)
    state: SolveState = field(kw_only=True)  # the solve's one mutable state, shared by its attempts

    def options_for(self, number: int) -> dict[str, Any]:
        """The chat options of attempt ``number``: the run's, with the attempt's temperature from attempt 2."""
        options = dict(self.chat_options)
        if number > 1:
            options.setdefault("temperature", self.limits.temperature_for(number, self.client.settings.temperature))
        return options

    def event(self, kind: str, **fields: Any) -> None:
        self.trace.event(kind, **fields)

    def budget_spent(self) -> bool:
        """Whether the task's token budget (all its requests so far) is used up."""
        budget = self.limits.task_token_budget
        return budget is not None and self.client.usage.total_tokens >= budget

    def result_chars(self) -> int:
        """The longest tool result kept in history: the limit, or about a quarter of a known window."""
        window = self.client.context_window
        return self.limits.tool_result_chars if window is None else min(self.limits.tool_result_chars, window)

    def findings_chars(self) -> int:
        """The longest findings summary: the limit, or about an eighth of a known window."""
        window = self.client.context_window
        return self.limits.findings_chars if window is None else min(self.limits.findings_chars, window // 2)

    def compaction_threshold(self) -> int:
        """Compact above this estimate: the limit, or less to fit a known context window."""
        window = self.client.context_window
        return self.limits.compaction_threshold(window, reply_tokens(self.client.settings.max_tokens, window))


async def run_attempt(number: int, conv: Conversation, run: AttemptRun) -> AttemptResult:
    """Loop until the model stops calling tools or a limit ends the attempt."""
    state = AttemptResult(number)
    run.state.begin_attempt()
    tools_tokens = estimate_tools_tokens(run.tools)
    while True:
        if state.requests and stalled(run, state):
            state.ended = STALLED
            run.event(EVENT_STALLED, attempt=number, rounds=state.stalled_rounds, requests=state.requests)
            return state
        if state.requests >= run.limits.max_requests_per_attempt:
            state.ended = REQUEST_CAP
            return state
        if run.deadline.expired():
            state.ended = DEADLINE
            return state
        if run.budget_spent():
            state.ended = TOKEN_BUDGET
            state.error = (f"the task's token budget is spent ({run.client.usage.total_tokens} of "
                           f"{run.limits.task_token_budget} tokens)")
            return state
        if state.tool_calls and run.state.error_streak.count >= REPEATS_TO_STOP:
            state.ended = REPEATED_ERROR
            return state
        govern(conv, run, state)
        await prepare_request(conv, run, state, tools_tokens)
        try:
            result = await call_model(conv, run, state, tools_tokens)
        except ContextOverflow as exc:
            state.ended, state.error = CONTEXT_OVERFLOW, str(exc)
            return state
        except LLMError as exc:
            state.ended, state.error = MODEL_ERROR, f"{type(exc).__name__}: {exc}"
            return state
        except TimeoutError:  # asyncio.timeout() at the task deadline cancelled the request
            state.ended = DEADLINE
            return state
        calls = record_answer(conv, result, run, state)
        if not calls and result.finish_reason == CUT_OFF:
            state.cap_lifted = True  # the next replies of this attempt get the usual room
        if not calls and not run.has_prediction() and await adopt_written_query(conv, result, run, state):
            continue  # (a cut reply too: its query block was closed, so the query is whole)
        # A reply cut by the cap is answered like any reply without a call (sent back once): a
        # cut-off nudge as well would cost one more request.
        if (not calls and result.finish_reason == CUT_OFF and not run.state.last_capped
                and state.cut_offs < run.limits.cut_off_retries):
            state.cut_offs += 1
            run.event(EVENT_CUT_OFF, attempt=number, request_id=result.request_id)
            conv.append(user_message(render_prompt("cut_off")))
            continue
        if not calls and state.sent_back < run.limits.send_backs and not run.has_prediction():
            state.sent_back += 1
            run.event(EVENT_NO_CALL_SENT_BACK, attempt=number, request_id=result.request_id, reply=result.content[:500])
            conv.append(user_message(render_prompt("sent_back", hint=send_back_hint(result.content))))
            continue
        if not calls:
            if send_back(conv, run, state):
                continue
            state.ended, state.final_text = ANSWERED, result.content
            return state
        await run_tools(conv, calls, run, state)


def stalled(run: AttemptRun, state: AttemptResult) -> bool:
    """The round just ended: count it, and say whether `Limits.stall_rounds` rounds in a row made no
    progress (`made_progress`)."""
    state.stalled_rounds = 0 if run.state.progressed else state.stalled_rounds + 1
    run.state.progressed = False
    return bool(run.limits.stall_rounds) and state.stalled_rounds >= run.limits.stall_rounds


def made_progress(run: AttemptRun, outcome: ToolOutcome, rows_query: str | None, blocking: int | None) -> bool:
    """Whether one outcome is progress: a query that returned rows for the first time, an OK run of the
    answer with fewer failed checks than any before (the first OK run too), or another new successful
    call (an edit, a read, a schema look-up). Not progress: a failed call, a repeated query, a query
    that found no rows or rows seen before, a run of the answer no better than the best so far."""
    if rows_query is not None:
        key = query_key(rows_query)
        new = key not in run.state.rows_keys
        run.state.rows_keys.add(key)
        return new
    if outcome.submits:
        if blocking is None:
            return False
        if run.state.fewest_blocking is None or blocking < run.state.fewest_blocking:
            run.state.fewest_blocking = blocking
            return True
        return False
    return outcome.ok and outcome.kind != REPEATED_QUERY and not isinstance(outcome.value, QueryResult)


def reply_kind(reply: str) -> str:
    """What a reply without a tool call held, in a few words (for the reason an attempt failed)."""
    if not without_echoed_results(reply).strip() and reply.strip():
        return "the last tool result written again"
    if _SQL_BLOCK.search(reply):
        return "an SQL query that did not run"
    if _CODE_BLOCK.search(reply):
        return "a code block and no query"
    if _TYPED_TABLE.search(reply):
        return "a table typed as text"
    return "prose" if reply.strip() else "an empty reply"


def send_back_hint(reply: str) -> str:
    """Which tool the reply's content belongs in (`solver_hint_*.md`)."""
    reply = without_echoed_results(reply)
    if _SQL_BLOCK.search(reply):
        return render_prompt("hint_sql")
    if _CODE_BLOCK.search(reply):
        return render_prompt("hint_code")
    # Small models answer prose, "Done." or an echo of the last tool result here; the one thing
    # they reliably write is a query, and a reply's ```sql block is tested and run for them.
    return render_prompt("hint_call")


async def prepare_request(conv: Conversation, run: AttemptRun, state: AttemptResult, tools_tokens: int) -> None:
    """Step 1: compact older turns when the conversation is over the token budget."""
    budget = run.compaction_threshold()
    if conv.estimated_tokens(tools_tokens) <= budget:
        return
    await _compact(conv, run, state, forced=False)
    if conv.estimated_tokens(tools_tokens) > budget:  # the latest results alone are too big
        await _compact(conv, run, state, forced=True)


async def call_model(
    conv: Conversation, run: AttemptRun, state: AttemptResult, tools_tokens: int = 0
) -> ChatResult:
    """Step 2: one request; a context-length 400 shrinks the history (never re-sent unchanged)."""
    shrinks = 0
    options = run.options_for(state.number)
    cap = reply_cap(run, state)
    run.state.last_capped = cap is not None
    if cap is not None:
        options["max_tokens"] = cap
    while True:
        state.requests += 1
        sent_len = len(conv.messages)
        try:
            async with asyncio.timeout(run.deadline.seconds_left()):
                result = await run.client.chat(conv.messages, run.tools, attempt=state.number, **options)
        except LLMContextLengthError as exc:
            if shrinks >= run.limits.context_shrinks or state.requests >= run.limits.max_requests_per_attempt:
                raise
            shrinks += 1
            await shrink_to_fit(conv, run, state, exc, tools_tokens)
            continue
        conv.note_reported(result.usage.prompt_tokens, sent_len, tools_tokens)
        if run.state.thinks is None or result.reasoning:
            run.state.thinks = bool(result.reasoning)
        return result


def reply_cap(run: AttemptRun, state: AttemptResult) -> int | None:
    """The max_tokens of the next request while a tool call is expected, or None for the usual.

    Only for a model known not to think (a thinking model's reasoning needs the room), while
    nothing is submitted, and until a reply of this attempt was cut off.
    """
    cap = run.limits.tool_reply_tokens
    if cap is None or run.state.thinks is not False or state.cap_lifted or "max_tokens" in run.chat_options:
        return None
    if run.has_prediction():
        return None
    usual = run.client.settings.max_tokens
    return cap if usual is None else min(cap, usual)


async def shrink_to_fit(
    conv: Conversation, run: AttemptRun, state: AttemptResult, error: LLMContextLengthError, tools_tokens: int
) -> None:
    """Cut the history by at least the ratio the error states; raise ContextOverflow when it cannot.

    In order: fold older turns into findings, then clip the latest tool results harder and harder.
    The head (rules, knowledge, tables, question) is never cut here; when it alone is too big the
    attempt ends with a reason that names the server's limit and the size sent.
    """
    limit = getattr(error, "limit", None)
    before = conv.estimated_tokens(tools_tokens)
    ratio = limit.ratio if limit is not None and limit.ratio else None
    target = int(before * min(ratio if ratio else 0.75, 1.0) * SHRINK_MARGIN)
    target = min(target, run.compaction_threshold())
    tail_chars = max(1_000, run.result_chars() // 4)
    findings = run.findings_chars()
    steps = 0
    while conv.estimated_tokens(tools_tokens) > target and steps < 6:
        changed = await _compact(conv, run, state, forced=steps > 0, tail_chars=tail_chars if steps else None,
                                 findings_chars=findings)
        if steps:
            tail_chars = max(200, tail_chars // 2)
            findings = max(500, findings // 2)
        steps += 1
        if not changed and steps > 1 and tail_chars <= 200:
            break
    after = conv.estimated_tokens(tools_tokens)
    run.event(EVENT_CONTEXT_SHRINK, attempt=state.number, tokens_before=before, tokens_after=after,
              target=target, limit=limit.limit if limit else None, requested=limit.requested if limit else None)
    if after > target:
        stated = (f"the server's window is {limit.limit} tokens and the request needed "
                  f"{limit.requested if limit.requested else 'more'}") if limit else f"the server said: {error}"
        raise ContextOverflow(
            f"the request does not fit the context window: {stated}; the history could only be cut "
            f"to ~{after} estimated tokens (the task prompt alone is ~{conv.head_tokens(tools_tokens)})"
        )


def record_answer(conv: Conversation, result: ChatResult, run: AttemptRun, state: AttemptResult) -> list[ToolCall]:
    """Append the answer to the history; return its tool calls (native, or read from its text), less the
    calls that call nothing (`is_null_call`)."""
    calls = list(result.tool_calls)
    nulls = sum(map(is_null_call, calls))
    if nulls:
        calls = [c for c in calls if not is_null_call(c)]
        state.null_calls += nulls
        run.event(EVENT_NULL_CALLS, attempt=state.number, request_id=result.request_id, count=nulls, left=len(calls))
    if result.text_form:
        run.event(EVENT_TEXT_TOOL_CALLS, attempt=state.number, request_id=result.request_id,
                  form=result.text_form, names=[c.name for c in calls])
    conv.append(assistant_message(result.content, calls))
    return calls


async def run_tools(conv: Conversation, calls: list[ToolCall], run: AttemptRun, state: AttemptResult) -> None:
    """Step 3: run the calls in order (an edit then a run must see each other) and append results."""
    for call in calls:
        outcome = repeated_query(call, run, state) or await run_new(call, run, state)
        if not take_outcome(conv, call, outcome, run, state):
            return  # the loop ends the attempt before the next request


async def run_new(call: ToolCall, run: AttemptRun, state: AttemptResult) -> ToolOutcome:
    """Run a call not answered from memory, with the program's rewrite when its query failed or found
    nothing (`offer_rewrite`); remember how a query it sent was answered, the rewrite included."""
    outcome = await run.runner.run(call)
    offered = await offer_rewrite(call, outcome, run, state)
    query = run.sent_query(call) if run.sent_query is not None else None
    if query is not None:
        value = outcome.value
        change = (CHANGE_TO_REWRITE if offered is not None and offered.sql is not None else
                  CHANGE_AFTER_ERROR if not outcome.ok else
                  CHANGE_AFTER_NO_ROWS if isinstance(value, QueryResult) and value.total_rows == 0 else CHANGE_AFTER_ROWS)
        run.state.sent[query_key(query)] = SentQuery(outcome.text, change)
    return outcome


async def offer_rewrite(call: ToolCall, outcome: ToolOutcome, run: AttemptRun,
                        state: AttemptResult) -> OfferedRewrite | None:
    """The program's rewrites of a query the call sent that failed or found nothing (the direct step's rules,
    `run.offer`, run read-only within their bound): each traced by its rule, and the first that returned rows
    appended to the result, kept as the latest query with rows (the fallback's after a stall). None when the
    call asked for none."""
    if run.offer is None or run.deadline.expired():
        return None
    offered = await asyncio.to_thread(run.offer, call, outcome)
    if offered is None:
        return None
    for tried in offered.tried:
        run.event(EVENT_RULE_REWRITE, attempt=state.number, call_id=call.id, **tried.event())
    if offered.sql is None:
        return offered
    run.event(EVENT_REWRITE_OFFERED, attempt=state.number, call_id=call.id, name=call.name, rule=offered.rule,
              sql=clip(offered.sql, 2000), again=offered.again)
    run.state.last_rows_query = offered.sql
    outcome.text = beside_result(outcome.text, offered.text, run.result_chars(), outcome.clip_note)
    return offered


def repeated_query(call: ToolCall, run: AttemptRun, state: AttemptResult) -> ToolOutcome | None:
    """A call sending a query the model sent before (in any attempt): not run again, answered with the
    earlier result after a note that names what to change; None for any other call."""
    query = run.sent_query(call) if run.sent_query is not None else None
    earlier = run.state.sent.get(query_key(query)) if query is not None else None
    if earlier is None:
        return None
    earlier.times += 1
    state.repeated_queries += 1
    times = f" ({earlier.times - 1} time{'s' if earlier.times > 2 else ''} already)"
    text = render_prompt("repeated_query", times=times, change=earlier.change).strip() + "\n" + earlier.text
    run.trace.tool_call(call.id, call.name, call.arguments_raw, repairs=[], error=None, via=call.via)
    run.trace.tool_result(call.id, call.name, text, ok=False, latency_s=0.0)
    run.event(EVENT_REPEATED_QUERY, attempt=state.number, call_id=call.id, query=clip(query or "", 500),
              times=earlier.times)
    return ToolOutcome(call.id, call.name, text, False, REPEATED_QUERY, [], arguments=call.arguments_raw)


def take_outcome(conv: Conversation, call: ToolCall, outcome: ToolOutcome, run: AttemptRun,
                 state: AttemptResult, *, note: str = "") -> bool:
    """Count one tool outcome, append its result (after ``note``); False when the same error came
    REPEATS_TO_STOP times in a row."""
    limit = run.result_chars()
    if len(outcome.text) > limit:  # a small window keeps shorter results than the runner's limit
        outcome.text = clip(outcome.text, limit, note=outcome.clip_note)
    state.tool_calls += 1
    state.tool_kinds[outcome.kind] = state.tool_kinds.get(outcome.kind, 0) + 1
    rows_query = returned_rows(outcome)
    blocking = None
    if outcome.submits:
        state.run_ok = outcome.ok
        note_checks(run, state, outcome)
        blocking = len(state.check_lines) if outcome.ok else None
    elif rows_query:
        run.state.last_rows_query = rows_query
    run.state.learnt.see(outcome, rows_query)
    if made_progress(run, outcome, rows_query, blocking):
        run.state.progressed = True
    # A repeated query is no error of the call: the stall rule, not the error streak, counts it.
    repeats = 0 if outcome.kind == REPEATED_QUERY else run.state.error_streak.see(outcome.ok, outcome.text)
    if repeats >= REPEATS_TO_WARN:
        outcome.text += repetition_note(outcome.kind, outcome.on_repeat, repeats)
        run.event(EVENT_ERROR_REPEATS, attempt=state.number, name=outcome.name, error_kind=outcome.kind,
                  count=repeats, error=outcome.text[:500])
    if note:
        outcome.text = f"{note}\n{outcome.text}"
    conv.append_result(outcome.message(), outcome.brief)
    return repeats < REPEATS_TO_STOP


async def adopt_written_query(conv: Conversation, result: ChatResult, run: AttemptRun, state: AttemptResult) -> bool:
    """A reply with no call that wrote an SQL query (an ```sql block, `run_sql("…")` in code):
    the query is tested (`run.written_query`'s probe); when it runs, the calls that put it into
    solver.py and run it are made, else the model sees the error and solver.py stays as it was.
    The reply is recorded as having made those calls, so the history, the trace and a replay
    show them. False when the reply wrote no query (or the loop has no such calls)."""
    query = written_query(without_echoed_results(result.content))  # never the query of an echoed result
    if query is None or run.written_query is None:
        return False
    plan = run.written_query(query)
    ids = (f"{ID_PREFIX}written_{result.request_id}_{n}" for n in range(1, 2 + len(plan.adopt)))
    probe = ToolCall(next(ids), plan.probe[0], json.dumps(plan.probe[1]), via=VIA_WRITTEN)
    repeat = repeated_query(probe, run, state)
    if repeat is not None:  # sent before: its earlier result, nothing put into solver.py
        state.adopted += 1
        run.event(EVENT_QUERY_ADOPTED, attempt=state.number, request_id=result.request_id, query=query[:2000],
                  ran=False, repeated=True, calls=[probe.name])
        conv.messages[-1] = assistant_message(result.content, [probe])
        take_outcome(conv, probe, repeat, run, state)
        return True
    tested = await run_new(probe, run, state)
    if tested.ok:
        calls = [ToolCall(next(ids), name, json.dumps(args), via=VIA_WRITTEN) for name, args in plan.adopt]
    else:
        calls = [probe]
    state.adopted += 1
    run.event(EVENT_QUERY_ADOPTED, attempt=state.number, request_id=result.request_id, query=query[:2000],
              ran=tested.ok, calls=[c.name for c in calls])
    conv.messages[-1] = assistant_message(result.content, calls)  # the reply, as the calls it stood for
    if not tested.ok:
        take_outcome(conv, probe, tested, run, state, note=render_prompt("written_query_failed"))
        return True
    for n, call in enumerate(calls):
        outcome = await run_new(call, run, state)
        if not take_outcome(conv, call, outcome, run, state, note=render_prompt("written_query_run") if n == 0 else ""):
            break
    return True


def govern(conv: Conversation, run: AttemptRun, state: AttemptResult) -> None:
    """Must-submit: near the end of the budget, with no OK run yet, tell the model once to submit."""
    if state.must_submit is not None or state.run_ok or not state.requests:
        return
    left = run.deadline.seconds_left()
    task_seconds = None if run.deadline.at is None else run.deadline.at - run.started
    why = must_submit_reason(run.limits, state.requests, left, task_seconds)
    if why is None:
        return
    state.must_submit = why
    run.event(EVENT_MUST_SUBMIT, attempt=state.number, reason=why, requests=state.requests)
    conv.append(user_message(render_prompt("must_submit", why=why)))


def returned_rows(outcome: ToolOutcome) -> str | None:
    """The SQL of a successful query result with at least one row (its value a QueryResult), else None."""
    value = outcome.value
    if outcome.ok and isinstance(value, QueryResult) and value.total_rows > 0:
        return value.sql.strip() or None
    return None


def note_checks(run: AttemptRun, state: AttemptResult, outcome: ToolOutcome) -> None:
    """Remember the answer checks of the latest run of the answer (a CheckReport value) and trace them."""
    report = outcome.value if outcome.ok and isinstance(outcome.value, CheckReport) else None
    state.checks = report.names if report is not None else []
    state.check_lines = [f.line() for f in report.blocking] if report is not None else []
    if report is not None:
        run.event(EVENT_ANSWER_CHECKS, attempt=state.number, call_id=outcome.call_id, checks=report.names,
                  blocking=[f.name for f in report.blocking], lines=report.lines(),
                  seconds=round(report.seconds, 3))


def send_back(conv: Conversation, run: AttemptRun, state: AttemptResult) -> bool:
    """The model stopped while its latest run has failed checks: tell it once, in this attempt.

    After the one send-back the answer is accepted as it is (fail open).
    """
    if state.checks_sent_back or not state.check_lines:
        return False
    state.checks_sent_back += 1
    run.event(EVENT_CHECKS_SENT_BACK, attempt=state.number, checks=list(state.checks), lines=list(state.check_lines))
    conv.append(user_message(render_prompt("checks_sent_back", check_lines="\n".join(state.check_lines))))
    return True


async def _compact(
    conv: Conversation, run: AttemptRun, state: AttemptResult, *, forced: bool, tail_chars: int | None = None,
    findings_chars: int | None = None,
) -> bool:
    view = await run.solver_view()
    if forced and tail_chars is None:
        tail_chars = max(1_000, run.result_chars() // 4)
    findings = findings_chars if findings_chars is not None else run.findings_chars()
    report = compact(conv, view, findings_chars=findings, tail_chars=tail_chars, forced=forced)
    if report is None:
        return False
    state.compactions += 1
    run.event(EVENT_COMPACTION, attempt=state.number, **asdict(report))
    return True
