"""The agent room: the Solver Agent's prompt assembly, tool-calling loop, compaction and attempts.

``solve_task`` is the entry point; the pipeline prepares the scratch dir, gathers a ``TaskRun`` and
calls it per task.
"""

from datasolver.eval.confidence import FALLBACK_CONFIDENCE
from datasolver.agent.limits import STALL_ROUNDS, Deadline, Limits
from datasolver.agent.solve import SolveOutcome, TaskRun, TaskSolver, solve_task
from datasolver.agent.warm_up import warm_up

__all__ = [
    "FALLBACK_CONFIDENCE",
    "STALL_ROUNDS",
    "Deadline",
    "Limits",
    "SolveOutcome",
    "TaskRun",
    "TaskSolver",
    "solve_task",
    "warm_up",
]
