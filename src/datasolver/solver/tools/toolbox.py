"""SolverToolbox: call the four tools by name for one task, as the agent (or a person) would."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from datasolver.solver.errors import UnknownTool
from datasolver.solver.layout import ScratchLayout
from datasolver.solver.sandbox import SandboxLimits
from datasolver.solver.tools.base import SolverTool, ToolContext, ToolResult

if TYPE_CHECKING:
    from datasolver.data import Catalog


class SolverToolbox:
    """The tools bound to one task scratch folder. Opens the catalog on first use; call close()."""

    def __init__(
        self, task_scratch_dir: Path, catalog: "Catalog | None" = None, limits: SandboxLimits | None = None
    ) -> None:
        self.layout = ScratchLayout.of(task_scratch_dir).require()
        self._catalog = catalog
        self._owns_catalog = catalog is None  # a catalog handed in belongs to the caller
        self.context = ToolContext(self.layout, self._open_catalog, limits or SandboxLimits())

    @property
    def names(self) -> list[str]:
        return [tool.name for tool in _registry()]

    def tool(self, name: str) -> SolverTool:
        for tool in _registry():
            if tool.name == name:
                return tool
        raise UnknownTool(f"no solver tool named {name!r}; tools: {', '.join(self.names)}")

    def args_model(self, name: str) -> type[BaseModel]:
        return self.tool(name).args_model

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema() for tool in _registry()]

    def call(self, name: str, args: BaseModel | dict[str, Any]) -> ToolResult:
        """Validate `args` against the tool's model and run it. Model mistakes come back as "retry"."""
        if name not in self.names:
            return ToolResult.retry(f"unknown tool {name!r}; available tools: {', '.join(self.names)}")
        tool = self.tool(name)
        try:
            if isinstance(args, tool.args_model):
                validated = args
            else:
                raw = args.model_dump() if isinstance(args, BaseModel) else args
                validated = tool.args_model.model_validate(raw)
        except ValidationError as exc:
            return ToolResult.retry(f"invalid arguments for {name}: {_compact(exc)}")
        return tool(self.context, validated)

    def _open_catalog(self) -> "Catalog":
        if self._catalog is None:
            from datasolver.data import Catalog

            self.layout.tmp.mkdir(exist_ok=True)
            # Exploration queries get the same wall-clock budget as a solver run.
            self._catalog = Catalog.open(self.layout.root, cache_dir=self.layout.tmp,
                                         timeout_s=self.context.limits.timeout_s)
        return self._catalog

    def close(self) -> None:
        if self._catalog is not None and self._owns_catalog:
            self._catalog.close()
            self._catalog = None

    def __enter__(self) -> "SolverToolbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _registry() -> tuple[SolverTool, ...]:
    from datasolver.solver.tools import SOLVER_TOOLS  # the registry imports this module

    return SOLVER_TOOLS


def _compact(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)
