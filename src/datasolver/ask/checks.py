"""The analyst's answer checks: what the program verifies before an answer is given.

A named table, `ASK_CHECKS` (like the Solver's `solver/answer_checks/run.ANSWER_CHECKS`): one
function per check, in order, on every final answer; the first that decides the answer ends them,
and `AnswerChecks.send_once` is the send-back policy they share.

1. `no_result`: no stored result backs it (the model answered without querying). Sent back once
   ("query first"); after that it is given marked unbacked, never as if it were backed.
2. `empty_result`: it rests on a result with no rows, or only NULLs, or a count of 0 whose filters
   matched no row (`data/empty_result.counts_zero`; a true 0 is an answer). Sent back once with why
   (the data room's diagnosis, `data/empty_result.py`: each filter dropped in turn, the nearest
   existing values); after that "nothing matches" may be the answer.
3. `stray_values`: numbers of the answer (or items of a list) that no stored result holds, nor the
   question. Sent back once; after that it is given marked unbacked.
4. `partial_list`: the question asks for several values and the answer names only part of the
   result it rests on (rows dropped, or a column the question names left out). The program writes
   the result into the answer itself ({DATA} with a plain row format): no send-back, no retyping.

Before them, `non_answer`: an answer that is no answer (empty, `{}`, `[]`, `None`, `null`, empty
tool-call markup, or text we sent the model: a send-back or the rules) is sent back once; after that
the latest stored result with rows is written into the answer by the program, or, when there is none,
the answer says plainly that there is no answer and why (never printed as backed).

Each send-back happens at most once per question, and only while a request is left; the one exception:
after the empty-result send-back, "nothing matches" resting on the same query, unchanged, is sent back
again (at most `EMPTY_REPEATS` times) while requests are left.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from collections.abc import Callable, Sequence

from datasolver.ask.answer import drop_restated_lead, without_call_markup
from datasolver.data.asked_items import names_column
from datasolver.ask.coverage import coverage, stray_values
from datasolver.ask.handles import Handle
from datasolver.ask.prompts import render_prompt
from datasolver.ask.render import answer_data, plain_row_format
from datasolver.ask.toolbox import AskToolbox, FinalAnswer, result_answer
from datasolver.clip import clip
from datasolver.llm.text_calls import same_query
from datasolver.data import DataError, QueryResult
from datasolver.data.empty_result import EmptyDiagnosis, counts_zero, explain_empty
from datasolver.data.names import quote_ident
from datasolver.data.question_shape import QuestionShape, read_question

NO_QUERY_NOTE = "no query backed this answer: the model answered without a stored result; check it against the data"
UNBACKED_MARK = "[unbacked: no query result holds this answer]"
"""What an answer that no stored result backs starts with, in the text output and in `--json`."""
CHECK_ROWS = 200  # rows of each stored result the values of an answer are looked up in
CHECK_RESULTS = 8  # the latest stored results looked in (the answer's own always)
CHECK_TIMEOUT_S = 5.0  # each query of a check
NO_ANSWER_MARK = "[no answer:"
"""What the answer says when the model gave none and no stored result has rows: `[no answer: why]`."""
EMPTY_REPEATS = 2  # send-backs of "nothing matches" resting on the same empty query, unchanged
# Replies that are no answer whatever the question (compared without spaces, case aside).
_NON_ANSWERS = frozenset({"{}", "[]", "()", "none", "null", "nil", "nan", "undefined", '""', "''", "n/a"})
ECHO_CHARS = 40  # an answer whose opening (this long, at least ECHO_MIN) is in text we sent repeats us
ECHO_MIN = 16

CheckName = Literal["non_answer", "no_result", "empty_result", "stray_values", "partial_list"]


@dataclass(frozen=True)
class CheckEvent:
    """What one check did to one answer: sent it back, rewrote it, or let it through unbacked."""

    check: CheckName
    action: Literal["sent_back", "rewrote", "unbacked"]
    detail: str


@dataclass
class Checked:
    """The outcome for one final answer."""

    final: FinalAnswer
    send_back: str | None = None
    """A message for the model: answer again (the answer is not taken)."""
    unbacked: str | None = None
    """Why no stored result backs the answer, when it is given anyway."""
    no_answer: str | None = None
    """Why the model's own answer was no answer, when the program wrote the answer instead."""
    events: list[CheckEvent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class AnswerChecks:
    """The checks of one question's final answers (each send-back at most once per question)."""

    def __init__(self, toolbox: AskToolbox, question: str, shape: QuestionShape | None = None) -> None:
        self.toolbox = toolbox
        self.question = question
        self.shape = shape if shape is not None else read_question(question)  # what it asks for, read once
        self.sent: set[CheckName] = set()
        self.diagnosed: dict[str, str] = {}  # the SQL of each empty result diagnosed → its diagnosis
        self.diagnoses: dict[str, EmptyDiagnosis] = {}  # the SQL of each result diagnosed → the diagnosis (once)
        self.empty_repeats = 0

    @property
    def handles(self):
        return self.toolbox.handles

    def check(self, final: FinalAnswer, *, can_send_back: bool, ours: Sequence[str] = ()) -> Checked:
        """Check one final answer; `can_send_back` is False when no request is left to answer again;
        `ours` is the text we sent the model (the rules, the send-backs), which is never an answer.

        The checks of `ASK_CHECKS` run in order; the first that decides the answer (sends it back,
        rewrites it as no answer, or gives it unbacked) ends them."""
        answer = Answering(final, Checked(final), can_send_back, ours)
        for _name, check in ASK_CHECKS:
            if check(self, answer):
                return answer.out
        if answer.out.final is final:  # the model's own words: without a lead-in that restates the question
            answer.out.final = replace(final, text=drop_restated_lead(final.text, self.question))
        return answer.out

    # ------------------------------------------------------------------ the checks' parts
    def send_once(self, out: Checked, check: CheckName, can_send_back: bool, message: str, detail: str) -> bool:
        """The send-back policy: `message` goes back to the model when `check` has not sent one back for
        this question and a request is left; True when it does."""
        if check in self.sent or not can_send_back:
            return False
        self.sent.add(check)
        out.send_back = message
        out.events.append(CheckEvent(check, "sent_back", detail))
        return True

    def why_empty(self, empty: Handle) -> tuple[str, list[str]]:
        """Why a result has no rows (or only NULLs, or is a count of 0 over filters that match nothing),
        in the `@N` names the model knows: the data room's diagnosis (each filter dropped in turn, the
        nearest existing values); and its notes."""
        if empty.sql not in self.diagnoses:  # (a count of 0 was diagnosed when it was found)
            self.diagnoses[empty.sql] = explain_empty(self.handles.catalog, empty.sql, timeout_s=CHECK_TIMEOUT_S,
                                                      null_rows=0 if empty.rows == 0 else empty.rows)
        diagnosis = self.diagnoses[empty.sql]
        text = self._readable(diagnosis.message())
        self.diagnosed[empty.sql] = text
        return text, list(diagnosis.notes)

    def without_answer(self, why: str, out: Checked | None = None) -> Checked:
        """The model gave no answer (`why`): the latest stored result with rows, written into the answer
        by the program; when there is none, `[no answer: why]`, marked unbacked."""
        out = out or Checked(FinalAnswer(""))
        best = next((h for h in reversed(self.handles.handles) if self.empty_in(h) is None), None)
        if best is not None:
            try:
                out.final = result_answer(self.toolbox, best)
            except DataError as exc:
                out.notes.append(f"could not read {best.ref}: {exc}")
                best = None
        if best is not None:
            out.no_answer = f"{why}; the answer is written from {best.ref}, the latest result with rows"
            out.events.append(CheckEvent("non_answer", "rewrote", out.no_answer))
            return out
        out.unbacked = f"{why}, and no stored result has rows"
        out.final = FinalAnswer(f"{NO_ANSWER_MARK} {out.unbacked}]")
        out.events.append(CheckEvent("non_answer", "unbacked", out.unbacked))
        return out

    def empty_in(self, backing: Handle) -> Handle | None:
        """The first result of the answer's lineage with no rows (the one to fix), or the answer's own
        result when it is only NULLs, or a count of 0 whose SELECTs matched no row; None when there are
        rows (a true count of 0 among them)."""
        for handle in self.handles.lineage(backing.index):
            if handle.rows == 0:
                return handle
        if 0 < backing.rows <= len(backing.sample) and all(v is None for row in backing.sample for v in row):
            return backing
        if backing.rows == 1 and self._counts_nothing(backing):
            return backing
        return None

    def _counts_nothing(self, handle: Handle) -> bool:
        """A count of 0 (`counts_zero`) of which some SELECT matched no row: a filter that matched
        nothing, not a true 0. Diagnosed once per SQL (the diagnosis runs queries)."""
        if not counts_zero(handle.sql, handle.sample):
            return False
        if handle.sql not in self.diagnoses:
            self.diagnoses[handle.sql] = explain_empty(self.handles.catalog, handle.sql, zero_count=True,
                                                       timeout_s=CHECK_TIMEOUT_S)
        return bool(self.diagnoses[handle.sql].empty_selects)

    def results_of(self, backing: Handle, notes: list[str]) -> dict[int, QueryResult]:
        """The first rows of the answer's result and of the latest others (a failed read is noted)."""
        wanted = [backing] + [h for h in reversed(self.handles.handles) if h.index != backing.index][:CHECK_RESULTS]
        out = {}
        for handle in wanted:
            try:
                out[handle.index] = self.handles.fetch(handle.index, CHECK_ROWS, timeout_s=CHECK_TIMEOUT_S)
            except DataError as exc:
                notes.append(f"answer check could not read {handle.ref}: {exc}")
        return out

    def write_whole_list(self, out: Checked, backing: Handle, result: QueryResult) -> None:
        """`partial_list`: the answer names part of a result the question wants whole; write the result."""
        if not self.shape.asks_many or not 0 < backing.rows <= len(result.rows):
            return
        named = coverage(out.final.text, result)
        if not named.rows_named:
            return
        asked = self.shape.count
        rows_dropped = len(named.rows_named) < backing.rows and (asked is None or backing.rows <= asked)
        columns = [c for c in result.columns if c in named.columns_named or names_column(self.question, c)]
        columns_dropped = any(c not in named.columns_named for c in columns)
        if not (rows_dropped or columns_dropped):
            return
        keep = [result.columns.index(c) for c in columns]
        shown = QueryResult(columns=columns, types=[result.types[i] for i in keep],
                            rows=[tuple(row[i] for i in keep) for row in result.rows], total_rows=backing.rows)
        limits = self.toolbox.limits
        text = answer_data(shown, plain_row_format(columns), limits.data_chars)
        left_out = [c for c in columns if c not in named.columns_named]
        detail = (f"the answer named {len(named.rows_named)} of {backing.rows} rows of {backing.ref}"
                  + (f" and not its column {', '.join(left_out)}" if left_out else "")
                  + f"; written from {backing.ref} ({', '.join(columns)})")
        out.final = FinalAnswer(text, "{DATA}", backing, [backing] + [h for h in out.final.evidence
                                                                        if h.index != backing.index])
        out.events.append(CheckEvent("partial_list", "rewrote", detail))

    def _readable(self, text: str) -> str:
        """Internal view names turned back into the `@N` the model knows."""
        for handle in self.handles.handles:
            text = text.replace(quote_ident(handle.view), handle.ref).replace(handle.view, handle.ref)
        return text


@dataclass
class Answering:
    """One final answer on its way through the checks: the answer, its outcome so far, whether a
    send-back is possible, and the text we sent the model; the results its values are looked up in,
    read once by the first check that needs them."""

    final: FinalAnswer
    out: Checked
    can_send_back: bool
    ours: Sequence[str]
    results: dict[int, QueryResult] | None = None

    @property
    def backing(self) -> Handle | None:
        """The stored result the answer rests on: its data, else its first evidence."""
        final = self.final
        return final.data if final.data is not None else (final.evidence[0] if final.evidence else None)


AskCheck = Callable[[AnswerChecks, Answering], bool]
"""One answer check: True when it decided the answer's outcome (the checks after it do not run)."""


def check_non_answer(checks: AnswerChecks, answer: Answering) -> bool:
    """An answer that is no answer: sent back once (with why the latest result is empty, when it is);
    after that the latest result with rows is written into the answer, or `[no answer: why]`."""
    out = answer.out
    why = non_answer(answer.final.text, answer.ours)
    if why is None:
        return False
    diagnosis = ""
    latest = checks.handles.latest()
    empty = checks.empty_in(latest) if latest is not None else None
    if empty is not None and "empty_result" not in checks.sent:
        text, notes = checks.why_empty(empty)
        out.notes += notes
        diagnosis = "\n" + render_prompt("empty_result", ref=empty.ref, diagnosis=text).strip()
    message = render_prompt("non_answer", why=why, diagnosis=diagnosis).strip()
    if checks.send_once(out, "non_answer", answer.can_send_back, message, why):
        if diagnosis:
            checks.sent.add("empty_result")
        return True
    checks.without_answer(f"the model's answer was no answer ({why})", out)
    return True


def check_no_result(checks: AnswerChecks, answer: Answering) -> bool:
    """No stored result backs the answer: sent back once ("query first"); after that given unbacked."""
    if answer.backing is not None:
        return False
    out = answer.out
    message = render_prompt("query_first").strip()
    if checks.send_once(out, "no_result", answer.can_send_back, message, "no stored result"):
        return True
    out.unbacked = NO_QUERY_NOTE
    out.events.append(CheckEvent("no_result", "unbacked", "no stored result"))
    return True


def check_empty_result(checks: AnswerChecks, answer: Answering) -> bool:
    """The answer rests on an empty result (no rows, only NULLs, a count of 0 over filters that match
    nothing): sent back once with why; "nothing matches" on the same query, unchanged, again (at most
    `EMPTY_REPEATS` times); after that the answer is given."""
    backing, out = answer.backing, answer.out
    empty = checks.empty_in(backing) if backing is not None else None
    if empty is None:
        return False
    before = next((d for sql, d in checks.diagnosed.items() if same_query(sql, empty.sql)), None)
    if (before is not None and "empty_result" in checks.sent and answer.can_send_back
            and checks.empty_repeats < EMPTY_REPEATS):  # "nothing matches" on the query, unchanged
        checks.empty_repeats += 1
        out.send_back = render_prompt("empty_unchanged", ref=empty.ref, diagnosis=before).strip()
        out.events.append(CheckEvent("empty_result", "sent_back", f"{empty.ref} unchanged: {before}"))
        return True
    diagnosis, notes = checks.why_empty(empty)
    out.notes += notes
    message = render_prompt("empty_result", ref=empty.ref, diagnosis=diagnosis).strip()
    checks.send_once(out, "empty_result", answer.can_send_back, message, f"{empty.ref}: {diagnosis}")
    return True


def check_stray_values(checks: AnswerChecks, answer: Answering) -> bool:
    """Values of the answer that no stored result holds, nor the question: sent back once; after that
    given unbacked."""
    backing, out, final = answer.backing, answer.out, answer.final
    if backing is None:
        return False
    answer.results = results = checks.results_of(backing, out.notes)
    own = final.template if final.template is not None else final.text
    stored = checks.handles.handles
    stray = stray_values(own, checks.question, list(results.values()), counts=[h.rows for h in stored],
                         sql=[h.sql for h in stored])
    if not stray:
        return False
    shown = ", ".join(stray[:10])
    copy = ("Then call final_answer again." if backing.rows == 0 else
            f"If {backing.ref} ({backing.rows} rows: {', '.join(backing.columns)}) answers the question, copy "
            f'this call: final_answer {{"answer": "{{DATA}}", "data": "{backing.ref}"}}')
    message = render_prompt("stray_values", values=shown, copy=copy).strip()
    if checks.send_once(out, "stray_values", answer.can_send_back, message, shown):
        return True
    out.unbacked = f"no stored result holds {shown} of this answer"
    out.events.append(CheckEvent("stray_values", "unbacked", shown))
    return True


def check_partial_list(checks: AnswerChecks, answer: Answering) -> bool:
    """The question asks for several values and the answer names part of its result: the program
    writes the result into the answer (never a send-back; the checks after it still run)."""
    backing, results = answer.backing, answer.results or {}
    if answer.final.template is None and backing is not None and backing.index in results:
        checks.write_whole_list(answer.out, backing, results[backing.index])
    return False


ASK_CHECKS: tuple[tuple[CheckName, AskCheck], ...] = (
    ("non_answer", check_non_answer),
    ("no_result", check_no_result),
    ("empty_result", check_empty_result),
    ("stray_values", check_stray_values),
    ("partial_list", check_partial_list),
)
"""The analyst's answer checks, in the order they run on every final answer (the Solver's are
`solver/answer_checks/run.ANSWER_CHECKS`); what each sends back once is `AnswerChecks.send_once`'s rule."""


def non_answer(text: str, ours: Sequence[str] = ()) -> str | None:
    """Why an answer is no answer, or None: empty (or only tool-call markup), a placeholder reply
    (`{}`, `[]`, `None`, `null` …), or text we sent the model (it opens as one of `ours` opens: a
    send-back's values, such as the nearest existing values, may be quoted in a real answer)."""
    stripped = without_call_markup(text).strip().strip("`").strip()
    if not stripped:
        return "it is empty"
    if "".join(stripped.split()).casefold() in _NON_ANSWERS:
        return f"`{clip(stripped, 40)}` says nothing"
    head = " ".join(stripped.split())[:ECHO_CHARS]
    if len(head) >= ECHO_MIN and any(" ".join(sent.split()).startswith(head) for sent in ours):
        return f"it repeats what we sent you: `{clip(head, 40)}`"
    return None


__all__ = ["ASK_CHECKS", "NO_ANSWER_MARK", "NO_QUERY_NOTE", "UNBACKED_MARK", "AnswerChecks", "CheckEvent", "Checked",
           "non_answer"]
