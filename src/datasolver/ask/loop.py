"""The analyst: a small ReAct loop. Build the request, call the model, run the tools, repeat.

The model plans; the program holds state (the handle table) and answers every tool call with
metadata only. The loop stops at final_answer (or a plain-text answer), and at the request cap
it asks once for the final answer with only final_answer on offer.

Where the program knows a repair it shows it: a query the model sent that failed or found nothing
gets the task-stage rules the direct step's judge applies, run read-only within a small bound
(`ask/offer.py`, `AskOffers`, over `data/rules/offer.py`); the first rewrite that returns rows is
appended to the tool result (rule, reason, SQL, rows, what to do), and each rewrite run is an
`EVENT_RULE_REWRITE` trace event, as in the Solver's loop.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from datasolver.ask.answer import without_call_markup
from datasolver.ask.checks import NO_ANSWER_MARK, NO_QUERY_NOTE, UNBACKED_MARK, AnswerChecks, CheckEvent, Checked
from datasolver.ask.confidence import AskEvidence
from datasolver.ask.config import AskConfig
from datasolver.ask.direct import DirectAnswer, DirectResult, rule_context
from datasolver.ask.handles import Handle
from datasolver.ask.offer import AskOffers, offer_addition
from datasolver.ask.package import DataPackage
from datasolver.ask.prompts import render_prompt
from datasolver.ask.question import require_question
from datasolver.ask.reviewer import Step, review_answer
from datasolver.ask.toolbox import FINAL_ANSWER, QUERY_TOOL, AskToolbox, FinalAnswer
from datasolver.ask.tools import table_overview
from datasolver.clip import clip
from datasolver.data import DataError
from datasolver.data.linking import QuestionLinks, link_question
from datasolver.data.rules.offer import EVENT_REWRITE_OFFERED, EVENT_RULE_REWRITE, TRACED_SQL_CHARS, beside_result
from datasolver.eval.confidence import confidence, confidence_reason
from datasolver.llm import ChatResult, LLMClient, system_message, user_message
from datasolver.llm.messages import ToolCall, assistant_message
from datasolver.llm.text_calls import ID_PREFIX, VIA_WRITTEN, written_query
from datasolver.toolkit import ToolOutcome, ToolRunner



@dataclass
class AskResult:
    """The answer to one question and everything needed to check it."""

    question: str
    answer: str
    template: str | None = None
    evidence_sql: list[str] = field(default_factory=list)
    backed_by_query: bool = False
    """Whether a stored result (a query the program ran) backs the answer; False when the model
    answered without one, or with values no stored result holds (`unbacked` says which; the answer
    then starts with UNBACKED_MARK)."""
    unbacked: str | None = None
    """Why no stored result backs the answer, when it was given anyway; None when one does."""
    no_answer: str | None = None
    """Why the model's own answer was no answer (`{}`, `None`, empty, our own text) when the program wrote
    the answer from the latest result with rows instead; None otherwise."""
    checks: list[CheckEvent] = field(default_factory=list)
    """What the answer checks did: a send-back, the program writing the result, an unbacked answer."""
    handles: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    stopped: str = "final_answer"
    path: str = "loop"
    """Which path answered: `direct` (one query from the linked schema, the answer written by the program
    from its rows) or `loop` (the tool loop, after the direct path gave no answer or was off)."""
    confidence: str | None = None
    """high | medium | low (`ask/confidence.py` maps the analyst's evidence onto `eval.confidence`'s rule);
    None without an answer."""
    confidence_reason: str | None = None
    """What the label was read from (`first query`, `one repair`, `failed checks`, …)."""
    reviewed: bool = False
    sent_back: bool = False
    review_feedback: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_record(self) -> dict[str, Any]:
        """The `ask --json` record."""
        record = asdict(self)
        record["ok"] = True
        return record


@dataclass
class _State:
    messages: list[dict[str, Any]]
    checks: AnswerChecks
    requests: int = 0
    nudged: bool = False
    unbacked: str | None = None
    no_answer: str | None = None
    events: list[CheckEvent] = field(default_factory=list)
    reviewed: bool = False
    sent_back: bool = False
    feedback: str | None = None
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    offers: AskOffers | None = None  # the program's rewrites of a query that failed or found nothing


class Analyst:
    """Answers questions over one data package with one model client."""

    def __init__(self, package: DataPackage, client: LLMClient, config: AskConfig | None = None) -> None:
        self.package = package
        self.client = client
        self.config = config or AskConfig()

    async def ask(self, question: str) -> AskResult:
        """Answer one question (EmptyQuestion when there is nothing to ask)."""
        cleaned = require_question(question)
        usage_before = self.client.usage.as_dict()
        toolbox = AskToolbox(self.package, self.config.limits)
        notes = list(cleaned.notes) + list(self.package.notes)
        checks = AnswerChecks(toolbox, cleaned.text, cleaned.shape)
        self._event("ask_question", question=cleaned.text, original=cleaned.original, notes=cleaned.notes)
        links = self._links(cleaned.text, notes)
        direct = DirectResult()
        if self.config.direct_answer:
            direct = await DirectAnswer(self.package, self.client, self.config, toolbox, checks, cleaned.text,
                                        links).run()
            notes += direct.notes
        if direct.final is not None:
            state = _State([], checks, requests=direct.step.requests, notes=notes)
            final, stopped, path = direct.final, "direct_answer", "direct"
        else:
            if self.config.direct_answer:
                notes.append(f"the direct query gave no answer ({direct.step.how}); the tool loop took over")
            first = self.first_message(cleaned.text, links, tried=direct.step.lessons())
            rules = rule_context(toolbox, links, checks)
            state = _State([system_message(self.system_prompt()), user_message(first)], checks,
                           requests=direct.step.requests, notes=notes, offers=AskOffers(lambda: rules))
            runner = ToolRunner(toolbox, self.client.trace)
            final, stopped = await self._run(state, toolbox, runner, cleaned.text)
            path = "loop"
        if final is None:
            state.notes.append("no answer within the request budget")
            given = checks.without_answer("no answer within the request budget")
            self._record(state, given)
            final, state.unbacked, state.no_answer = given.final, given.unbacked, given.no_answer
        if final.guessed_evidence:
            state.notes.append("the answer cited no result; the latest result is reported as evidence")
        unbacked = state.unbacked if final.evidence else (state.unbacked or NO_QUERY_NOTE)
        answer = final.text
        if unbacked is not None:
            state.notes.append(unbacked)
            if answer and not answer.startswith(NO_ANSWER_MARK):
                answer = f"{UNBACKED_MARK} {answer}"
        if state.no_answer is not None:
            state.notes.append(state.no_answer)
        evidence = AskEvidence(path, direct.step, self.config.direct_answer, state.events, backed=unbacked is None,
                               written_by_program=state.no_answer is not None,
                               answered=not answer.startswith(NO_ANSWER_MARK)).evidence()
        lineage: dict[int, Handle] = {}
        for handle in final.evidence:
            lineage.update({h.index: h for h in toolbox.handles.lineage(handle.index)})
        result = AskResult(
            question=cleaned.text, answer=answer, template=final.template,
            evidence_sql=[toolbox.handles.evidence_sql(h.index) for h in final.evidence],
            backed_by_query=unbacked is None, unbacked=unbacked, no_answer=state.no_answer, checks=state.events,
            handles=[_handle_record(h) for _, h in sorted(lineage.items())],
            usage=self.client.usage.since(usage_before), steps=state.steps, stopped=stopped, path=path,
            confidence=confidence(evidence) if evidence is not None else None,
            confidence_reason=confidence_reason(evidence) if evidence is not None else None, reviewed=state.reviewed, sent_back=state.sent_back, review_feedback=state.feedback, notes=state.notes,
        )
        self._event("ask_answer", answer=result.answer, stopped=stopped, path=path, evidence_sql=result.evidence_sql,
                    confidence=result.confidence, confidence_reason=result.confidence_reason)
        return result

    def _links(self, question: str, notes: list[str]) -> QuestionLinks | None:
        """Question linking (`data.linking`): tables, columns and values the question names, found
        without a model; a failure is a note."""
        try:
            return link_question(self.package.catalog, question, knowledge=self.package.knowledge)
        except DataError as exc:
            notes.append(f"question linking skipped: {exc}")
            return None

    def first_message(self, question: str, links: QuestionLinks | None, tried: list[str] | None = None) -> str:
        """What the model is asked: the tables and knowledge.md of the data, then the question and what
        it names in the data (question linking, `data.linking`: tables, columns and values found without
        a model; look-alike tables on a line of their own), then the direct path's queries that gave no
        answer. The system prompt and the tools before it are the same for every question over any
        data, and the tables the same for every question over the same data, so a server keeps the
        longest prefix it can in its prompt cache."""
        limits = self.config.limits
        graphs = "\n".join(f"- {g.describe()}" for g in self.package.graphs)
        linked = links.render() if links is not None else ""
        tried_text = ("\n\nTried first, no answer (the results stay stored):\n"
                      + "\n".join(f"- {line}" for line in tried)) if tried else ""
        return render_prompt(
            "question",
            tables=clip(table_overview(self.package, with_graphs=False), limits.table_list_chars, counted=True),
            graphs=("Knowledge graphs (use the related tool)\n" + graphs + "\n\n") if graphs else "",
            knowledge=clip(self.package.knowledge.strip(), limits.knowledge_chars, counted=True) or "(none)",
            question=question, linking=f"\n\n{linked}" if linked else "", tried=tried_text,
        ).strip()

    def system_prompt(self) -> str:
        """The rules: the same text for every question over any data."""
        return render_prompt("system", answer_rows=self.config.limits.answer_rows).strip()

    # ------------------------------------------------------------------ the loop
    async def _run(self, state: _State, toolbox: AskToolbox, runner: ToolRunner,
                   question: str) -> tuple[FinalAnswer | None, str]:
        limits = self.config.limits
        while state.requests < limits.max_requests:
            last_chance = state.requests == limits.max_requests - 1
            if last_chance:
                state.messages.append(user_message(render_prompt("finish_now")))
            reply = await self._call_model(state, toolbox, final_only=last_chance)
            final, stopped = await self._run_tools(state, toolbox, runner, reply)
            if final is None:
                continue
            checked = state.checks.check(final, can_send_back=state.requests < limits.max_requests,
                                         ours=_our_text(state.messages))
            self._record(state, checked)
            if checked.send_back is not None:
                state.messages.append(user_message(checked.send_back))
                continue
            final, state.unbacked, state.no_answer = checked.final, checked.unbacked, checked.no_answer
            if self.config.review and not state.reviewed:
                if state.requests >= limits.max_requests:
                    state.notes.append("reviewer skipped: request budget used up")
                    return final, stopped
                state.reviewed = True
                state.requests += 1
                review = await review_answer(self.client, self.config, question=question, steps=state.steps,
                                             final=final, handles=toolbox.handles)
                if review.problem:
                    state.notes.append(review.problem)
                self._event("ask_review", accepted=review.accepted, feedback=review.feedback)
                if not review.accepted and state.requests < limits.max_requests:
                    state.sent_back, state.feedback = True, review.feedback
                    state.messages.append(user_message(render_prompt("sent_back", feedback=review.feedback)))
                    continue
            return final, stopped
        return None, "request_limit"

    def _record(self, state: _State, checked: Checked) -> None:
        state.events += checked.events
        state.notes += checked.notes
        for event in checked.events:
            self._event("ask_check", check=event.check, action=event.action, detail=event.detail)

    async def _call_model(self, state: _State, toolbox: AskToolbox, final_only: bool) -> ChatResult:
        tools = [t for t in toolbox.schemas() if not final_only or t["function"]["name"] == FINAL_ANSWER]
        state.requests += 1
        reply = await self.client.chat(state.messages, tools, enable_thinking=self.config.enable_thinking,
                                       temperature=self.config.temperature)
        state.messages.append(reply.assistant_message())
        return reply

    async def _run_tools(self, state: _State, toolbox: AskToolbox, runner: ToolRunner,
                         reply: ChatResult) -> tuple[FinalAnswer | None, str]:
        if not reply.tool_calls:
            written = written_query(reply.content)
            if written is not None:  # a ```sql block instead of a call: run it as `query` for the model
                await self._run_written(state, toolbox, runner, reply, written)
                return None, ""
            if without_call_markup(reply.content):
                return toolbox.answer_from_text(reply.content), "text"
            if not state.nudged:
                state.nudged = True
                state.messages.append(user_message(render_prompt("use_final_answer")))
            return None, ""
        final: FinalAnswer | None = None
        for call in reply.tool_calls:
            outcome = await runner.run(call)
            await self._offer(state, toolbox, call, outcome)
            if isinstance(outcome.value, FinalAnswer) and final is None:
                final = outcome.value
            state.messages.append(outcome.message())
            state.steps.append(_step(outcome))
        return final, FINAL_ANSWER

    async def _run_written(self, state: _State, toolbox: AskToolbox, runner: ToolRunner, reply: ChatResult,
                           sql: str) -> None:
        """A reply that wrote an SQL query and called nothing (what small models do best): the query
        runs as a `query` call, the reply is recorded as having made it, and the model is told so."""
        call = ToolCall(f"{ID_PREFIX}written_{state.requests}", QUERY_TOOL, json.dumps({"sql": sql}), via=VIA_WRITTEN)
        state.messages[-1] = assistant_message(reply.content, [call])
        outcome = await runner.run(call)
        await self._offer(state, toolbox, call, outcome)
        message = outcome.message()
        message["content"] = render_prompt("written_query_run").strip() + "\n" + message["content"]
        state.messages.append(message)
        state.steps.append(_step(outcome))
        self._event("ask_query_adopted", request=state.requests, query=sql[:2000], ran=outcome.ok)

    async def _offer(self, state: _State, toolbox: AskToolbox, call: ToolCall, outcome: ToolOutcome) -> None:
        """The program's rewrites of a query the call sent that failed or found nothing (`ask/offer.py`), run
        read-only within their bound: each traced by its rule, the first that returned rows appended to the
        call's result (the result cut first where both would not fit)."""
        if state.offers is None:
            return
        offer = await asyncio.to_thread(state.offers, call, outcome)
        if offer is None:
            return
        for tried in offer.tried:
            self._event(EVENT_RULE_REWRITE, request=state.requests, call_id=call.id, **tried.event())
        text = offer_addition(offer)
        if offer.found is None or not text:
            return
        self._event(EVENT_REWRITE_OFFERED, request=state.requests, call_id=call.id, name=call.name,
                    rule=offer.found.rule, sql=clip(offer.found.sql, TRACED_SQL_CHARS), again=offer.again)
        outcome.text = beside_result(outcome.text, text, toolbox.limits.tool_result_chars, outcome.clip_note)

    def _event(self, kind: str, **fields: Any) -> None:
        self.client.trace.event(kind, **fields)


def _our_text(messages: list[dict[str, Any]]) -> list[str]:
    """What we sent the model that is never an answer: the rules and every user message after the first
    (send-backs, nudges); the first holds the data and the question, whose words an answer may use."""
    users = [m for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
    rules = [m["content"] for m in messages if m.get("role") == "system" and isinstance(m.get("content"), str)]
    return rules + [m["content"] for m in users[1:]]


def _step(outcome: ToolOutcome) -> Step:
    """The call as the reviewer sees it: the arguments it set (or the raw text) and the first line."""
    shown = outcome.args.model_dump(exclude_defaults=True) if outcome.args is not None else outcome.arguments
    return Step(outcome.name, shown, outcome.text.splitlines()[0] if outcome.text else "", outcome.ok)


def _handle_record(handle: Handle) -> dict[str, Any]:
    return {"ref": handle.ref, "operation": handle.operation, "columns": list(handle.columns),
            "types": list(handle.types), "rows": handle.rows, "parents": [f"@{p}" for p in handle.parents]}


__all__ = ["Analyst", "AskResult", "Step"]
