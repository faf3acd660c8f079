"""SolveState: what changes during one solve of a task, in one place.

The solve reads a frozen `TaskRun` (and, per attempt, the `AttemptRun` built from it: client, tools,
limits, deadline); everything it changes lives here, as pydantic-ai keeps an agent's state apart from
its deps. The session (`agent/solve.py`) and the loop (`agent/loop.py`) change it; nothing else does.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from datasolver.agent.brief import TaskBrief
from datasolver.agent.governor import ErrorStreak
from datasolver.agent.learnt import Learnt

OPENING_SHARE = 0.6  # of the window's room the whole opening may take; smaller after an overflow


@dataclass
class AttemptResult:
    """How one attempt went (what its `attempt_end` event and the outcome report). ``error`` is set when it
    ended with an exception."""

    number: int
    ended: str = ""
    requests: int = 0
    tool_calls: int = 0
    error: str | None = None
    final_text: str = ""
    compactions: int = 0
    cut_offs: int = 0
    sent_back: int = 0
    adopted: int = 0  # replies whose written SQL query was tested and run for the model
    tool_kinds: dict[str, int] = field(default_factory=dict)  # outcome kind → count
    checks: list[str] = field(default_factory=list)  # the latest run of the answer's failed answer checks
    check_lines: list[str] = field(default_factory=list)  # its CHECK lines worth a send-back
    checks_sent_back: int = 0  # times the model was sent back over failed checks (at most once)
    run_ok: bool = False  # the latest run of the answer in this attempt said OK
    must_submit: str | None = None  # why the governor told the model to submit now
    cap_lifted: bool = False  # a reply was cut off: no tool_reply_tokens cap for the rest of the attempt
    repeated_queries: int = 0  # queries sent before, answered from their earlier result
    null_calls: int = 0  # calls that called nothing, dropped
    stalled_rounds: int = 0  # rounds in a row without progress, at the end

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SentQuery:
    """A query the model sent, as it was answered: the result it saw, what to change on a repeat."""

    text: str
    change: str
    times: int = 1


@dataclass(frozen=True)
class Held:
    """An answer that ran OK but whose checks failed, held back while another attempt may do better."""

    source: str
    code: str  # its solver.py
    blocking: list[str]


@dataclass
class SolveState:
    """What one solve changes: the fitted opening, the attempts and their answers, and what the loop
    learnt across attempts (queries sent, rows seen, the best run so far), plus the current
    attempt's round flags (reset by `begin_attempt`)."""

    # the opening, fitted to its budget (again after a context overflow)
    brief: TaskBrief  # the brief the opening was built from (folded to fit)
    opening: list[dict[str, Any]]  # the opening messages
    votes: dict[str, float] | None = None  # relevance votes, asked once when first needed
    fitted_window: int | None = None  # the context window the opening was fitted to
    opening_share: float = OPENING_SHARE  # of the window's room; smaller after an overflow
    scale: float = 1.0  # the server's tokens per estimated token, once a request was answered
    # the attempts and their answers
    results: list[AttemptResult] = field(default_factory=list)
    direct_requests: int = 0  # requests of the direct path (attempt 0)
    direct_ran: int = 0  # 1 once the direct path ran (a repair round before the loop)
    held: list[Held] = field(default_factory=list)  # answers held back over failed checks (`Limits.hold_flagged`)
    last_edited: str | None = None  # solver.py at the end of the latest attempt that changed it
    label: str | None = None  # the published answer's confidence
    # what the loop learnt, across attempts
    thinks: bool | None = None  # whether the model's replies carry reasoning (learnt from its first reply)
    learnt: Learnt = field(default_factory=Learnt)  # what every attempt so far found out, for the next one
    last_rows_query: str | None = None  # the latest query that returned rows
    sent: dict[str, SentQuery] = field(default_factory=dict)  # query_key -> how it was answered
    rows_keys: set[str] = field(default_factory=set)  # query_key of every query that returned rows
    fewest_blocking: int | None = None  # the fewest failed answer checks of an OK run so far
    # the current attempt's round flags
    error_streak: ErrorStreak = field(default_factory=ErrorStreak, repr=False)
    last_capped: bool = False  # the latest request asked for at most tool_reply_tokens
    progressed: bool = False  # the current round made progress

    def begin_attempt(self) -> None:
        """A new attempt: its round flags start afresh (what was learnt stays)."""
        self.error_streak, self.last_capped, self.progressed = ErrorStreak(), False, False
