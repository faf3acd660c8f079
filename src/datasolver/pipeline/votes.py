"""Adaptive voting: independent solves of one task until two agree, else the majority.

Each solve is a whole agent run (a fresh conversation) writing into its own folder. The first
runs at temperature 0, later ones at `VotePolicy.temperature`. Two solves agree when their
predictions have the same answer signature under the official metric
(`datasolver.eval.prediction_signature`: a hash of the multiset of normalized column value-multisets,
header and row order free). Voting stops at the first agreement; otherwise after `votes` solves the largest
group wins, a tie going to the group whose best solve has fewer failed answer checks, then to the
earliest.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from datasolver.agent import SolveOutcome
from datasolver.eval import prediction_signature
from datasolver.pipeline.errors import RunConfigError
from datasolver.settings import check_settings, count, sampling_temperature

EVENT_SOLVE_START = "vote_solve_start"
EVENT_SOLVE_END = "vote_solve_end"
EVENT_VOTE = "vote_result"


@dataclass(frozen=True)
class VotePolicy:
    """How many solves at most, and the temperature of every solve after the first."""

    votes: int = count(1, "independent solves per task at most (`--votes`); voting stops at the first agreement")
    temperature: float = sampling_temperature(0.7, "temperature of every solve after the first (the first runs at 0)")

    def __post_init__(self) -> None:
        check_settings(self, RunConfigError)

    def temperature_of(self, number: int) -> float:
        return 0.0 if number == 1 else self.temperature


@dataclass
class SolveRecord:
    """One solve: its status, prediction, answer signature (short hash) and failed checks."""

    number: int
    temperature: float
    status: str
    requests: int
    seconds: float
    prediction: str | None
    signature: str | None  # None: no readable prediction
    failed_checks: int
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
        return data


@dataclass
class VoteOutcome:
    """All solves, the chosen one (index into `solves`, None when none has a prediction) and why."""

    solves: list[SolveRecord] = field(default_factory=list)
    chosen: int | None = None
    how: str = ""  # "agreement" | "majority" | "tie: fewer failed checks" | "tie: earliest" | "single" | "none"
    outcomes: list[SolveOutcome] = field(default_factory=list)  # each solve's outcome

    def votes(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for solve in self.solves:
            if solve.signature is not None:
                counts[solve.signature] = counts.get(solve.signature, 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {"solves": [s.to_json() for s in self.solves], "votes": self.votes(),
                "chosen": None if self.chosen is None else self.solves[self.chosen].number, "how": self.how}


# (solve number, temperature, output folder) -> that solve's outcome
SolveOnce = Callable[[int, float, Path], Awaitable[SolveOutcome]]


async def solve_by_vote(
    solve_once: SolveOnce, policy: VotePolicy, votes_dir: Path, task_id: str, event: Callable[..., None]
) -> VoteOutcome:
    """Run solves until two agree or `policy.votes` have run; pick the answer."""
    out = VoteOutcome()
    keys: list[str | None] = []
    for number in range(1, policy.votes + 1):
        temperature = policy.temperature_of(number)
        event(EVENT_SOLVE_START, solve=number, temperature=temperature)
        started = time.monotonic()
        outcome = await solve_once(number, temperature, votes_dir / f"solve_{number}")
        key = _answer_key(outcome.prediction)
        record = SolveRecord(
            number=number, temperature=temperature, status=outcome.status, requests=outcome.requests,
            seconds=time.monotonic() - started, prediction=str(outcome.prediction) if outcome.prediction else None,
            signature=key, failed_checks=failed_checks(outcome), reason=outcome.reason,
        )
        out.solves.append(record)
        out.outcomes.append(outcome)
        keys.append(key)
        event(EVENT_SOLVE_END, **record.to_json())
        if key is not None and keys.index(key) < number - 1:
            out.chosen, out.how = keys.index(key), "agreement"
            break
    else:
        out.chosen, out.how = choose(out.solves)
    event(EVENT_VOTE, task_id=task_id, **out.to_json())
    return out


def choose(solves: list[SolveRecord]) -> tuple[int | None, str]:
    """Majority of signatures; a tie goes to fewer failed checks, then to the earliest solve."""
    groups: dict[str, list[int]] = {}
    for index, solve in enumerate(solves):
        if solve.signature is not None:
            groups.setdefault(solve.signature, []).append(index)
    if not groups:
        return None, "none"
    if len(solves) == 1:
        return 0, "single"
    largest = max(len(members) for members in groups.values())
    tied = [members for members in groups.values() if len(members) == largest]
    if len(tied) == 1:
        return tied[0][0], "majority"
    best = [min(members, key=lambda i: (solves[i].failed_checks, i)) for members in tied]
    fewest = min(solves[i].failed_checks for i in best)
    winners = sorted(i for i in best if solves[i].failed_checks == fewest)
    return winners[0], "tie: fewer failed checks" if len(winners) < len(best) else "tie: earliest"


def failed_checks(outcome: SolveOutcome) -> int:
    """Failed answer checks of the latest run of the solve's last attempt (0 when unknown)."""
    attempts = outcome.attempt_results
    return len(attempts[-1].checks) if attempts else 0


def _answer_key(prediction: Path | None) -> str | None:
    """The metric's signature of the prediction (eval.prediction_signature), None when unscorable."""
    if prediction is None:
        return None
    key = prediction_signature(Path(prediction))
    return None if key in ("missing", "invalid") else key
