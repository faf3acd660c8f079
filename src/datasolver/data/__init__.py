"""The data engine: every CSV / JSON / SQLite / document table of a task under one DuckDB namespace.

The library is the product; the CLI, the solver tools and the generated solver.py are its callers.
"""

from datasolver.data.catalog import LOADED_ENV, Catalog
from datasolver.data.errors import DataError, QueryError, ScratchError, TaskError, UnknownTable
from datasolver.data.layout import ScratchLayout, TaskFolder
from datasolver.data.input_limits import human_size
from datasolver.data.load_notes import render_notes
from datasolver.data.table_cache import TableCache
from datasolver.data.joins import join_candidates, render_joins
from datasolver.data.lint import lint_knowledge
from datasolver.data.profile import TableProfile, profile_table
from datasolver.data.results import QueryResult, TableInfo, render_result
from datasolver.data.tasks import Task, discover_tasks, load_task

__all__ = [
    "TableCache",
    "render_notes",
    "LOADED_ENV",
    "human_size",
    "join_candidates",
    "lint_knowledge",
    "render_joins",
    "Catalog",
    "DataError",
    "QueryError",
    "QueryResult",
    "ScratchError",
    "ScratchLayout",
    "TableInfo",
    "TableProfile",
    "Task",
    "TaskFolder",
    "TaskError",
    "UnknownTable",
    "discover_tasks",
    "load_task",
    "profile_table",
    "render_result",
]
