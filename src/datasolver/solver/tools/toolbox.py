"""SolverToolbox: the four tools bound to one task, called by name as the agent (or a person) would."""

from __future__ import annotations

from typing import TYPE_CHECKING

from datasolver.data.layout import ScratchLayout
from datasolver.data.tasks import Task, load_task
from datasolver.sandbox import SandboxLimits
from datasolver.solver.errors import UnknownTool
from datasolver.solver.scaffold import query_area
from datasolver.solver.tools.base import ToolContext
from datasolver.solver.tools.read_solver import MAX_LIMIT, read_solver
from datasolver.solver.tools.registry import SOLVER_TOOLS
from datasolver.solver.tools.solver_file import read_lines
from datasolver.toolkit import Tool, Toolbox

if TYPE_CHECKING:
    from datasolver.data import Catalog


class SolverToolbox(Toolbox[ToolContext]):
    """The tools bound to one task scratch folder. Opens the catalog on first use; call close().

    `task` is the task's Task when the caller has it; without it the scratch's task.json is read."""

    def __init__(
        self, layout: ScratchLayout, catalog: "Catalog | None" = None, limits: SandboxLimits | None = None,
        *, answer_checks: bool = True, task: Task | None = None,
    ) -> None:
        self.layout = layout
        self._catalog = catalog
        self._owns_catalog = catalog is None  # a catalog handed in belongs to the caller
        task = task if task is not None else load_task(self.layout.root)
        super().__init__(SOLVER_TOOLS, ToolContext(task, self.layout, self._open_catalog,
                                                   limits or SandboxLimits(), answer_checks))

    def tool(self, name: str) -> Tool[ToolContext]:
        if name not in self.names:
            raise UnknownTool(f"no solver tool named {name!r}; tools: {', '.join(self.names)}")
        return super().tool(name)

    def solver_view(self, area_only: bool = False) -> str:
        """solver.py as read_solver shows it (a summary's view of the current program); with
        ``area_only`` only its query area, when its markers are there (numbers and hashes stay valid)."""
        area = query_area(read_lines(self.layout) or []) if area_only else None
        offset, limit = (area[0], area[1] - area[0] + 1) if area is not None else (1, MAX_LIMIT)
        return read_solver(self.context, offset=offset, limit=limit).text

    @property
    def catalog(self) -> "Catalog":
        """The catalog the tools query (opened on first use)."""
        return self._open_catalog()

    def _open_catalog(self) -> "Catalog":
        if self._catalog is None:
            from datasolver.data import Catalog

            # Exploration queries get the same wall-clock budget as a solver run. The cache is the
            # parent's own (cache/), outside what the sandbox can write.
            self._catalog = Catalog.open(self.layout.root, cache_dir=self.layout.own_cache(),
                                         timeout_s=self.context.limits.timeout_s)
        return self._catalog

    def interrupt(self) -> None:
        """Stop whatever the catalog is running (after a tool timeout), a table load included."""
        if self._catalog is not None:
            self._catalog.interrupt()

    def close(self) -> None:
        if self._catalog is not None and self._owns_catalog:
            self._catalog.close()
            self._catalog = None

    def __enter__(self) -> "SolverToolbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
