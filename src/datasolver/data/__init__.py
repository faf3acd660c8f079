"""The data engine: every CSV / JSON / SQLite / document table of a task under one DuckDB namespace.

The library is the product; the CLI, the solver tools and the generated solver.py are its callers.
"""

from datasolver.data.catalog import LOADED_ENV, Activity, Catalog, SkippedSource
from datasolver.data.errors import (
    CellTooLarge,
    DataError,
    QueryError,
    QueryInterrupted,
    ReadOnlyViolation,
    SqlSyntaxError,
    ScratchError,
    SourceSkipped,
    TaskError,
    UnknownTable,
)
from datasolver.data.layout import ScratchLayout, TaskFolder
from datasolver.data.input_limits import InputLimits, human_size
from datasolver.data.load_notes import LoadNote, render_notes
from datasolver.data.table_cache import TableCache
from datasolver.data.joins import JoinCandidate, join_candidates, render_joins
from datasolver.data.lint import LintReport, lint_knowledge
from datasolver.data.names import canonical_name
from datasolver.data.relation import Relation
from datasolver.data.profile import TableProfile, profile_table, render_profiles
from datasolver.data.results import QueryResult, TableInfo, render_result
from datasolver.data.tasks import Task, TaskDiscovery, discover_tasks, load_task, task_id_problem

__all__ = [
    "Activity",
    "LoadNote",
    "TableCache",
    "render_notes",
    "CellTooLarge",
    "LOADED_ENV",
    "InputLimits",
    "human_size",
    "JoinCandidate",
    "LintReport",
    "join_candidates",
    "lint_knowledge",
    "render_joins",
    "Catalog",
    "DataError",
    "QueryError",
    "QueryInterrupted",
    "QueryResult",
    "ReadOnlyViolation",
    "SqlSyntaxError",
    "Relation",
    "ScratchError",
    "ScratchLayout",
    "SkippedSource",
    "SourceSkipped",
    "TableInfo",
    "TableProfile",
    "Task",
    "TaskDiscovery",
    "TaskFolder",
    "TaskError",
    "UnknownTable",
    "canonical_name",
    "discover_tasks",
    "load_task",
    "task_id_problem",
    "profile_table",
    "render_profiles",
    "render_result",
]
