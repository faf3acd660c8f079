"""The agent room: the Solver Agent's prompt assembly, tool-calling loop, compaction and attempts.

``solve_task`` is the entry point; the pipeline prepares the scratch dir, gathers a ``TaskRun`` and
calls it per task.
"""

from datasolver.agent.assemble import (
    build_knowledge_prompt,
    build_messages,
    build_system_prompt,
    build_task_prompt,
    build_user_prompt,
)
from datasolver.agent.brief import TaskBrief, gather_brief
from datasolver.agent.compaction import CompactionReport, compact
from datasolver.agent.conversation import Conversation
from datasolver.agent.errors import AgentError, LimitsError
from datasolver.agent.fit import DEFAULT_PROMPT_BUDGET, first_prompt_tokens, fit_brief
from datasolver.agent.limits import Limits
from datasolver.agent.loop import AttemptResult, run_attempt
from datasolver.agent.prompts import render_prompt
from datasolver.agent.solve import SolveOutcome, TaskRun, TaskSolver, solve_task
from datasolver.agent.tokens import estimate_messages_tokens, estimate_tokens
from datasolver.agent.warm_up import WarmUp, warm_up

__all__ = [
    "AgentError",
    "AttemptResult",
    "DEFAULT_PROMPT_BUDGET",
    "CompactionReport",
    "Conversation",
    "Limits",
    "LimitsError",
    "SolveOutcome",
    "TaskBrief",
    "TaskRun",
    "TaskSolver",
    "WarmUp",
    "build_knowledge_prompt",
    "build_messages",
    "build_system_prompt",
    "build_task_prompt",
    "build_user_prompt",
    "compact",
    "estimate_messages_tokens",
    "estimate_tokens",
    "first_prompt_tokens",
    "fit_brief",
    "gather_brief",
    "render_prompt",
    "run_attempt",
    "solve_task",
    "warm_up",
]
