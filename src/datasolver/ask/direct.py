"""The analyst's direct step (`datasolver.direct_step`): its messages, its judge, the answer written from the chosen result.

A small model writes a ```sql block well and calls tools poorly (on a CPU server the real 1.5B model
spent 2 to 5 requests of 5,000 prompt tokens on the tool loop, and re-typed its results wrongly). So a
question starts with ONE request, tools off: the tables question linking (`data/linking.py`) says the
question may mean, each with its columns, types and first rows; the other tables by name; knowledge.md;
the question and its linking block; "reply with one DuckDB query in a ```sql block". The query runs as
the `query` tool runs it (a stored result `@1`, through the data layer's dialect repairs and read-only
guard), under the answer checks' evidence rules: an error or an empty result is no answer (the empty
one diagnosed by the data room, each filter dropped in turn and the nearest existing values), nor is a
result of more rows than an answer spells out (`answer_rows`) when the question asks for one value (its
shape, `data/question_shape.py`); each gets up to `DIRECT_REPAIRS` repair turns. When a query returns
rows, the program writes the answer from the result (a list as its rows, one value as the value, after
the column names), so no value is re-typed by the model. When no query answers, the tool loop starts and
is told what was tried (the results stay stored, as @N).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from datasolver.ask.checks import AnswerChecks
from datasolver.ask.config import AskConfig
from datasolver.ask.handles import Handle
from datasolver.ask.package import DataPackage
from datasolver.ask.prompts import render_prompt
from datasolver.ask.toolbox import AskToolbox, FinalAnswer, result_answer
from datasolver.clip import clip
from datasolver.data import DataError
from datasolver.data.linking import QuestionLinks
from datasolver.data.rules.context import ResultShape, Rewrite, RuleContext
from datasolver.data.rules.offer import error_rewrites
from datasolver.data.rules.stages import apply_on_empty, apply_on_rows
from datasolver.direct_step import Candidate, DirectOutcome, DirectTerms, DirectStep
from datasolver.llm import LLMClient, system_message, user_message

EVENT_DIRECT = "ask_direct"
DIRECT_TABLES = 4  # tables described with columns, types and sample rows (the best linked first)
DIRECT_REPLY_TOKENS = 512  # one query is short; a reply that rambles is cut here
DESCRIBED_CHARS = 3_000  # of one described table (a wide table's columns and rows)
OTHER_TABLES_CHARS = 2_000  # the other tables, by name, in the direct prompt
DIRECT_REPAIRS = 2
"""Repair turns after the first query. Each continues the one conversation, so a server that caches the
prompt's prefix (llama.cpp does) reads only the new turn: on the CPU server a repair took 21-34 s where
the tool loop's first request, a new prompt with the tools, took 170 s (benchmark tasks v1800, v2640)."""
REPEAT_TEMPERATURE = 0.7
"""The repair after a query written again is sampled at this temperature (at least): at 0 the real 1.5B model
wrote one failing query three times running (benchmark tasks v256, v2640), the send-back notwithstanding."""


@dataclass
class DirectResult:
    """What the analyst's direct step came to: the step's outcome, the answer written from the chosen
    result (None: the tool loop takes over), and the notes for the record."""

    step: DirectOutcome = field(default_factory=DirectOutcome)
    final: FinalAnswer | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class AskJudge:
    """A query stored as `query` stores it, judged by the evidence rules; the answer written from a result
    that answers. The program's rewrites read the catalog, the question's links and shape."""

    toolbox: AskToolbox
    checks: AnswerChecks
    config: AskConfig
    links: QuestionLinks | None
    answers: dict[str, FinalAnswer] = field(default_factory=dict)  # by the result's `@N`
    notes: list[str] = field(default_factory=list)
    final: FinalAnswer | None = None  # the chosen result's answer

    async def run(self, sql: str, source: str) -> Candidate:
        try:
            handle = self.toolbox.handles.query(sql)
        except DataError as exc:  # a refused or failing query: the model may fix it
            return Candidate(sql, source, blocking=[f"{type(exc).__name__}: {exc}"])
        why, empty = self._why_not(handle)
        return Candidate(sql, source, ok=True, blocking=[why] if why is not None else [], found_nothing=empty,
                         result=ResultShape(handle.columns, handle.rows), ref=handle.ref)

    def _why_not(self, handle: Handle) -> tuple[str | None, bool]:
        """Why a stored result is no answer (None: it answers, and its answer is written), and whether it
        has nothing in it (no rows, NULLs, a count of 0 over no rows)."""
        empty = self.checks.empty_in(handle)
        if empty is not None:
            diagnosis, notes = self.checks.why_empty(empty)
            self.notes += notes
            return f"{handle.ref}: {diagnosis}", True
        if handle.rows > self.config.limits.answer_rows and not self.checks.shape.asks_many:
            return (f"{handle.ref} has {handle.rows} rows, but the question asks for one value (or a few): aggregate, "
                    "filter or limit in the query so that its rows are the answer"), False
        try:
            self.answers[handle.ref] = result_answer(self.toolbox, handle)
        except DataError as exc:
            return f"its rows could not be read: {exc}", False
        return None, False

    async def rewrites(self, failed: Candidate) -> list[Rewrite]:
        """Of a query that found nothing, the SQL its result ran (with the diagnosis the checks made of it);
        of a query that failed, the query as written, by its error."""
        if failed.ref is not None:
            sql = self.toolbox.handles.get(failed.ref).sql
            return apply_on_empty(sql, replace(self._context(), diagnosis=self.checks.diagnoses.get(sql)))
        return error_rewrites(failed.sql, failed.why(), self._context())

    async def row_rewrites(self, passed: Candidate) -> list[Rewrite]:
        return apply_on_rows(passed.sql, passed.result, self._context()) if passed.result is not None else []

    async def adopt(self, chosen: Candidate) -> bool:
        """Stored results stay: the chosen one's answer, written when it was judged, is the answer."""
        self.final = self.answers.get(chosen.ref) if chosen.ref is not None else None
        return self.final is not None

    def _context(self) -> RuleContext:
        return rule_context(self.toolbox, self.links, self.checks)


def rule_context(toolbox: AskToolbox, links: QuestionLinks | None, checks: AnswerChecks) -> RuleContext:
    """What the task's rewrite rules read of one question (the catalog, the question's links and shape): one
    context for the direct step's judge and the tool loop's offers (`ask/offer.py`)."""
    return RuleContext(toolbox.handles.catalog, links, shape=checks.shape)


@dataclass
class DirectAnswer:
    """The direct step of one question: the package, the model, the toolbox its results go into."""

    package: DataPackage
    client: LLMClient
    config: AskConfig
    toolbox: AskToolbox
    checks: AnswerChecks
    question: str
    links: QuestionLinks | None

    async def run(self) -> DirectResult:
        """One request; on an error, an empty result or too many rows, the program's rewrites and up to
        `DIRECT_REPAIRS` repair turns; the answer written from the first result that answers."""
        messages = [system_message(render_prompt("direct_system").strip()),
                    user_message(direct_prompt(self.package, self.question, self.links, self.config))]
        judge = AskJudge(self.toolbox, self.checks, self.config, self.links)
        terms = DirectTerms(
            render=render_prompt, repair_prompt="direct_repair", reply_tokens=DIRECT_REPLY_TOKENS,
            candidate_event=EVENT_DIRECT, step_event=EVENT_DIRECT, repairs=DIRECT_REPAIRS,
            temperature=self.config.temperature, warmer=REPEAT_TEMPERATURE,
            chat_options={"enable_thinking": self.config.enable_thinking}, max_requests=self.config.limits.max_requests)
        step = await DirectStep(messages, self.client, judge, terms).run()
        if step.chosen is not None and step.chosen.rewrite_of is not None:
            judge.notes.append(rewrite_note(step.chosen, step.chosen.rewrite_of))
        return DirectResult(step, judge.final, judge.notes)


def rewrite_note(chosen: Candidate, of: Candidate) -> str:
    """The record's line for an answer the program's rewrite gave: what it rewrote, how, and that it answers."""
    if not of.ok:
        what = "the query failed"
    elif of.found_nothing:
        what = f"{of.ref} found nothing"
    else:
        what = f"{of.ref} answered"
    return f"{what}; {chosen.rewritten}, and {chosen.ref or 'that'} answers"


def direct_prompt(package: DataPackage, question: str, links: QuestionLinks | None, config: AskConfig) -> str:
    """The direct request's user message: the tables the question may mean described (columns, types,
    first rows), the others by name, knowledge.md, the question and its linking block."""
    limits = config.limits
    catalog = package.catalog
    names = catalog.names()
    chosen = (links.linked() if links is not None else [])[:DIRECT_TABLES]
    if not chosen:  # nothing links: the first tables by rank (every table of a small folder)
        chosen = (links.top(DIRECT_TABLES) if links is not None else names[:DIRECT_TABLES])
    described = []
    for name in chosen:
        try:
            described.append(clip(catalog.describe(name, sample_rows=limits.sample_rows), DESCRIBED_CHARS,
                                  counted=True))
        except DataError as exc:
            described.append(f"{name}: could not be read ({exc})")
    others = [n for n in names if n not in chosen and (links is None or n not in links.lookalikes)]
    lines = []
    for name in others:
        columns = catalog.column_names(name, load=False) or []
        lines.append(f"- {name}: {', '.join(columns)}" if columns else f"- {name}")
    other_text = ("Other tables (name: columns)\n" + clip("\n".join(lines), OTHER_TABLES_CHARS, counted=True)
                  + "\n\n") if lines else ""
    linking = links.render() if links is not None else ""
    return render_prompt(
        "direct", schema="\n\n".join(described) or "(no tables)", others=other_text,
        knowledge=clip(package.knowledge.strip(), limits.knowledge_chars, counted=True) or "(none)",
        question=question, linking=f"\n\n{linking}" if linking else "",
    ).strip()


__all__ = ["AskJudge", "DirectAnswer", "DirectResult", "direct_prompt", "rule_context"]
