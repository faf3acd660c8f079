"""What every solver tool works on: one task's scratch folder, its catalog and sandbox limits.

A tool is a plain typed function `tool(ctx: ToolContext, **arguments) -> ToolResult`; the tool kit
(`datasolver.toolkit`) builds its argument model and schema from the signature and docstring.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from datasolver.data.layout import ScratchLayout
from datasolver.data.tasks import Task
from datasolver.sandbox import SandboxLimits

if TYPE_CHECKING:
    from datasolver.data import Catalog


@dataclass
class ToolContext:
    """One task (its question, for the answer checks), its scratch folder, its catalog (opened on
    first use) and sandbox limits."""

    task: Task
    layout: ScratchLayout
    open_catalog: Callable[[], "Catalog"]
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    answer_checks: bool = True  # run_solver checks an OK answer (off only to measure what they bring)
