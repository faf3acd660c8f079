"""The analyst's cheapest path first: one query from the linked schema, the answer written by the program.

A small model writes a ```sql block well and calls tools poorly (on a CPU server the real 1.5B model
spent 2 to 5 requests of 5,000 prompt tokens on the tool loop, and re-typed its results wrongly). So a
question starts with ONE request, tools off: the tables question linking (`data/linking.py`) says the
question may mean, each with its columns, types and first rows; the other tables by name; knowledge.md;
the question and its linking block; "reply with one DuckDB query in a ```sql block". The query runs as
the `query` tool runs it (a stored result `@1`, through the data layer's dialect repairs and read-only
guard), under the answer checks' evidence rules: an error or an empty result is no answer (the empty
one diagnosed by the data room, each filter dropped in turn and the nearest existing values), and gets
a repair turn, as does a result of more rows than an answer spells out (`answer_rows`) when the question
asks for one value (its shape, `data/question_shape.py`): up to `DIRECT_REPAIRS` repair turns, each in
the same conversation (a query written again is told so). When a query returns rows, the program writes the answer
from the result (a list as its rows, one value as the value, after the column names), so no value is
re-typed by the model.
When no query of these answers, the tool loop starts and is told what was tried (the results stay
stored, as @N).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from datasolver.ask.checks import AnswerChecks
from datasolver.ask.config import AskConfig
from datasolver.ask.handles import Handle
from datasolver.ask.package import DataPackage
from datasolver.ask.prompts import render_prompt
from datasolver.ask.toolbox import AskToolbox, FinalAnswer, result_answer
from datasolver.clip import clip
from datasolver.data import DataError
from datasolver.data.linking import QuestionLinks
from datasolver.data.duck_errors import parse_duck_error
from datasolver.llm import LLMClient, LLMError, system_message, user_message
from datasolver.llm.text_calls import reply_query, same_query
from datasolver.data.rules.context import RuleContext
from datasolver.data.rules.stages import apply_on_empty, apply_on_error

EVENT_DIRECT = "ask_direct"
DIRECT_TABLES = 4  # tables described with columns, types and sample rows (the best linked first)
DIRECT_REPLY_TOKENS = 512  # one query is short; a reply that rambles is cut here
DESCRIBED_CHARS = 3_000  # of one described table (a wide table's columns and rows)
OTHER_TABLES_CHARS = 2_000  # the other tables, by name, in the direct prompt
PROBLEM_CHARS = 1_500  # of an error or a diagnosis, in the repair turn
DIRECT_REPAIRS = 2
"""Repair turns after the first query. Each continues the one conversation, so a server that caches the
prompt's prefix (llama.cpp does) reads only the new turn: on the CPU server a repair took 21-34 s where
the tool loop's first request, a new prompt with the tools, took 170 s (benchmark tasks v1800, v2640)."""
REPEAT_TEMPERATURE = 0.7
"""The repair after a query written again is sampled at this temperature (at least): at 0 the real 1.5B model
wrote one failing query three times running (benchmark tasks v256, v2640), the send-back notwithstanding."""
REPEATED = ("That is the query you wrote before. Write a different one: a filter value as the data spells it, "
            "another column, or another table of the message.")


@dataclass
class DirectTry:
    """One query of the direct path and what running it gave."""

    sql: str
    source: str  # direct | repair | respelled (the program rewrote a query that found nothing or failed)
    handle: Handle | None = None
    problem: str | None = None  # why it is no answer (an error, no rows and why); None when it answered
    repeats: str | None = None  # the source of the earlier try whose query this one wrote again
    empty: bool = False  # its problem is a result with nothing in it (no rows, NULLs, a count of 0 of no rows)
    rule: str | None = None  # the rule that rewrote the query (`datasolver.data.rules`), when the program did

    def lesson(self) -> str:
        """One line for the tool loop's opening: the query, its result and why it was no answer."""
        where = f"{self.handle.ref} " if self.handle is not None else ""
        return f"- {where}`{clip(' '.join(self.sql.split()), 300)}` → {clip(self.problem or 'answered', 400)}"

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "sql": clip(self.sql, 2000),
                "result": self.handle.ref if self.handle is not None else None,
                "rows": self.handle.rows if self.handle is not None else None, "problem": self.problem,
                **({"rule": self.rule} if self.rule is not None else {})}


@dataclass
class DirectOutcome:
    """What the direct path came to: an answer written from a result, or why the loop takes over."""

    tries: list[DirectTry] = field(default_factory=list)
    final: FinalAnswer | None = None
    requests: int = 0
    why_not: str = ""
    notes: list[str] = field(default_factory=list)

    def lessons(self) -> list[str]:
        """What the loop is told was tried (each distinct query once)."""
        return list(dict.fromkeys(t.lesson() for t in self.tries if t.problem))


@dataclass
class DirectAnswer:
    """The direct path of one question: the package, the model, the toolbox its results go into."""

    package: DataPackage
    client: LLMClient
    config: AskConfig
    toolbox: AskToolbox
    checks: AnswerChecks
    question: str
    links: QuestionLinks | None
    outcome: DirectOutcome = field(default_factory=DirectOutcome)

    async def run(self) -> DirectOutcome:
        """One request; on an error or an empty result up to `DIRECT_REPAIRS` repair turns; an answer from
        the first query that returns rows."""
        messages = [system_message(render_prompt("direct_system").strip()),
                    user_message(direct_prompt(self.package, self.question, self.links, self.config))]
        tried = await self._ask(messages, "direct")
        for _ in range(DIRECT_REPAIRS):
            if tried is None or tried.problem is None or self.outcome.requests >= self.config.limits.max_requests:
                break
            messages = [*messages, {"role": "assistant", "content": f"```sql\n{tried.sql}\n```"},
                        user_message(render_prompt("direct_repair", problem=clip(tried.problem, PROBLEM_CHARS),
                                                   again=f"\n{REPEATED}" if tried.repeats else "").strip())]
            tried = await self._ask(messages, "repair", REPEAT_TEMPERATURE if tried.repeats else None)
        if self.outcome.final is None and not self.outcome.why_not:
            self.outcome.why_not = "no query of the direct path returned rows"
        self._event(answered=self.outcome.final is not None, why_not=self.outcome.why_not or None,
                    requests=self.outcome.requests)
        return self.outcome

    async def _ask(self, messages: list[dict[str, Any]], source: str, temperature: float | None = None) -> DirectTry | None:
        """One request (at `temperature`, else the configured one), its query run; None when the reply had
        no query (or the request failed)."""
        temperature = self.config.temperature if temperature is None else max(temperature, self.config.temperature)
        try:
            reply = await self.client.chat(messages, None, enable_thinking=self.config.enable_thinking,
                                           temperature=temperature, max_tokens=DIRECT_REPLY_TOKENS)
        except LLMError as exc:
            self.outcome.why_not = f"the direct request failed: {type(exc).__name__}: {exc}"
            self._event(source=source, error=self.outcome.why_not)
            return None
        self.outcome.requests += 1
        sql = reply_query(reply.content, reply.tool_calls)
        if sql is None:
            self.outcome.why_not = "the direct reply wrote no query"
            self._event(source=source, query=None, reply=clip(reply.content, 500))
            return None
        earlier = next((t for t in self.outcome.tries if same_query(t.sql, sql)), None)
        tried = (DirectTry(sql, source, earlier.handle, earlier.problem, repeats=earlier.source) if earlier is not None
                 else self._run(sql, source))  # (a repeat is not rewritten again: its first try was)
        self.outcome.tries.append(tried)
        self._event(**tried.as_dict(), **({"repeated": earlier.source} if earlier is not None else {}))
        failed = tried.handle is None and tried.problem is not None and tried.repeats is None
        rewritten = self._rewritten(tried) if tried.empty or failed else None
        if rewritten is not None:
            self.outcome.tries.append(rewritten)
            self._event(**rewritten.as_dict())
            return rewritten
        return tried

    def _rewritten(self, tried: DirectTry) -> DirectTry | None:
        """The query whose filters found nothing, or that failed, rewritten by the program
        (`datasolver.data.rules`: the linked filter values put in; a join that pairs nothing answered from one
        table; a column name written whole where a piece of it did not parse), no request spent. The
        first that answers is taken, named by its rule; None when none does."""
        catalog = self.package.catalog
        if tried.handle is not None:
            candidates = apply_on_empty(tried.handle.sql, RuleContext(catalog, self.links,
                                                                      self.checks.diagnoses.get(tried.handle.sql)))
            failed = f"{tried.handle.ref} found nothing"
        else:
            candidates = apply_on_error(tried.sql, parse_duck_error(tried.problem or ""), RuleContext(catalog, self.links))
            failed = "the query failed"
        for rewrite in candidates:
            sql, how = rewrite.sql, rewrite.reason
            if any(same_query(t.sql, sql) for t in self.outcome.tries):
                continue
            fixed = replace(self._run(sql, "respelled"), rule=rewrite.rule)
            if fixed.problem is None:
                self.outcome.notes.append(f"{failed}; {how}, and "
                                          f"{fixed.handle.ref if fixed.handle else 'that'} answers")
                return fixed
        return None

    def _run(self, sql: str, source: str) -> DirectTry:
        """The query stored as `query` stores it, judged by the evidence rules; the answer when it has rows."""
        try:
            handle = self.toolbox.handles.query(sql)
        except DataError as exc:  # a refused or failing query: the model may fix it
            return DirectTry(sql, source, problem=f"{type(exc).__name__}: {exc}")
        empty = self.checks.empty_in(handle)
        if empty is not None:
            diagnosis, notes = self.checks.why_empty(empty)
            self.outcome.notes += notes
            return DirectTry(sql, source, handle, problem=f"{handle.ref}: {diagnosis}", empty=True)  # no rows, NULLs, 0
        if handle.rows > self.config.limits.answer_rows and not self.checks.shape.asks_many:
            return DirectTry(sql, source, handle, problem=(
                f"{handle.ref} has {handle.rows} rows, but the question asks for one value (or a few): aggregate, "
                "filter or limit in the query so that its rows are the answer"))
        try:
            self.outcome.final = result_answer(self.toolbox, handle)
        except DataError as exc:
            return DirectTry(sql, source, handle, problem=f"its rows could not be read: {exc}")
        return DirectTry(sql, source, handle)

    def _event(self, **fields: Any) -> None:
        self.client.trace.event(EVENT_DIRECT, **fields)


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


__all__ = ["DirectAnswer", "DirectOutcome", "DirectTry", "direct_prompt"]
