"""The analyst's answer checks: what the program verifies before an answer is given.

In order, on every final answer:

1. `no_result`: no stored result backs it (the model answered without querying). Sent back once
   ("query first"); after that it is given marked unbacked, never as if it were backed.
2. `empty_result`: it rests on a result with no rows, or only NULLs. Sent back once with why
   (the data room's diagnosis, `data/empty_result.py`: each filter dropped in turn, the nearest
   existing values); after that "nothing matches" may be the answer.
3. `stray_values`: numbers of the answer (or items of a list) that no stored result holds, nor the
   question. Sent back once; after that it is given marked unbacked.
4. `partial_list`: the question asks for several values and the answer names only part of the
   result it rests on (rows dropped, or a column the question names left out). The program writes
   the result into the answer itself ({DATA} with a plain row format): no send-back, no retyping.

Each send-back happens at most once per question, and only while a request is left.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from datasolver.ask.answer import drop_restated_lead
from datasolver.ask.asked import asked_count, asks_for_many, names_column
from datasolver.ask.coverage import coverage, stray_values
from datasolver.ask.handles import Handle
from datasolver.ask.prompts import render_prompt
from datasolver.ask.render import answer_data, plain_row_format
from datasolver.ask.toolbox import AskToolbox, FinalAnswer
from datasolver.data import DataError, QueryResult
from datasolver.data.empty_result import explain_empty
from datasolver.data.names import quote_ident

NO_QUERY_NOTE = "no query backed this answer: the model answered without a stored result; check it against the data"
UNBACKED_MARK = "[unbacked: no query result holds this answer]"
"""What an answer that no stored result backs starts with, in the text output and in `--json`."""
CHECK_ROWS = 200  # rows of each stored result the values of an answer are looked up in
CHECK_RESULTS = 8  # the latest stored results looked in (the answer's own always)
CHECK_TIMEOUT_S = 5.0  # each query of a check

CheckName = Literal["no_result", "empty_result", "stray_values", "partial_list"]


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
    events: list[CheckEvent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class AnswerChecks:
    """The checks of one question's final answers (each send-back at most once per question)."""

    def __init__(self, toolbox: AskToolbox, question: str) -> None:
        self.toolbox = toolbox
        self.question = question
        self.sent: set[CheckName] = set()

    @property
    def handles(self):
        return self.toolbox.handles

    def check(self, final: FinalAnswer, *, can_send_back: bool) -> Checked:
        """Check one final answer; `can_send_back` is False when no request is left to answer again."""
        out = Checked(final)
        backing = final.data if final.data is not None else (final.evidence[0] if final.evidence else None)
        if backing is None:
            if self._send(out, "no_result", can_send_back, render_prompt("query_first").strip(), "no stored result"):
                return out
            out.unbacked = NO_QUERY_NOTE
            out.events.append(CheckEvent("no_result", "unbacked", "no stored result"))
            return out
        empty = self.empty_in(backing)
        if empty is not None:
            diagnosis, notes = self.why_empty(empty)
            out.notes += notes
            message = render_prompt("empty_result", ref=empty.ref, diagnosis=diagnosis).strip()
            if self._send(out, "empty_result", can_send_back, message, f"{empty.ref}: {diagnosis}"):
                return out
            return out
        results = self._results(backing, out.notes)
        own = final.template if final.template is not None else final.text
        stored = self.handles.handles
        stray = stray_values(own, self.question, list(results.values()), counts=[h.rows for h in stored],
                             sql=[h.sql for h in stored])
        if stray:
            shown = ", ".join(stray[:10])
            copy = ("Then call final_answer again." if backing.rows == 0 else
                    f"If {backing.ref} ({backing.rows} rows: {', '.join(backing.columns)}) answers the question, copy "
                    f'this call: final_answer {{"answer": "{{DATA}}", "data": "{backing.ref}"}}')
            message = render_prompt("stray_values", values=shown, copy=copy).strip()
            if self._send(out, "stray_values", can_send_back, message, shown):
                return out
            out.unbacked = f"no stored result holds {shown} of this answer"
            out.events.append(CheckEvent("stray_values", "unbacked", shown))
            return out
        if final.template is None and backing.index in results:
            self._write_whole_list(out, backing, results[backing.index])
        if out.final is final:  # the model's own words: without a lead-in that restates the question
            out.final = replace(final, text=drop_restated_lead(final.text, self.question))
        return out

    # ------------------------------------------------------------------ the checks' parts
    def _send(self, out: Checked, check: CheckName, can_send_back: bool, message: str, detail: str) -> bool:
        if check in self.sent or not can_send_back:
            return False
        self.sent.add(check)
        out.send_back = message
        out.events.append(CheckEvent(check, "sent_back", detail))
        return True

    def why_empty(self, empty: Handle) -> tuple[str, list[str]]:
        """Why a result has no rows (or only NULLs), in the `@N` names the model knows: the data room's
        diagnosis (each filter dropped in turn, the nearest existing values); and its notes."""
        diagnosis = explain_empty(self.handles.catalog, empty.sql, null_rows=0 if empty.rows == 0 else empty.rows,
                                  timeout_s=CHECK_TIMEOUT_S)
        return self._readable(diagnosis.message()), list(diagnosis.notes)

    def empty_in(self, backing: Handle) -> Handle | None:
        """The first result of the answer's lineage with no rows (the one to fix), or the answer's own
        result when it is only NULLs; None when there are rows."""
        for handle in self.handles.lineage(backing.index):
            if handle.rows == 0:
                return handle
        if 0 < backing.rows <= len(backing.sample) and all(v is None for row in backing.sample for v in row):
            return backing
        return None

    def _results(self, backing: Handle, notes: list[str]) -> dict[int, QueryResult]:
        """The first rows of the answer's result and of the latest others (a failed read is noted)."""
        wanted = [backing] + [h for h in reversed(self.handles.handles) if h.index != backing.index][:CHECK_RESULTS]
        out = {}
        for handle in wanted:
            try:
                out[handle.index] = self.handles.fetch(handle.index, CHECK_ROWS, timeout_s=CHECK_TIMEOUT_S)
            except DataError as exc:
                notes.append(f"answer check could not read {handle.ref}: {exc}")
        return out

    def _write_whole_list(self, out: Checked, backing: Handle, result: QueryResult) -> None:
        """`partial_list`: the answer names part of a result the question wants whole; write the result."""
        if not asks_for_many(self.question) or not 0 < backing.rows <= len(result.rows):
            return
        named = coverage(out.final.text, result)
        if not named.rows_named:
            return
        asked = asked_count(self.question)
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


__all__ = ["NO_QUERY_NOTE", "UNBACKED_MARK", "AnswerChecks", "CheckEvent", "Checked"]
