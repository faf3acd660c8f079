"""The ask room: a text-answer analyst over any data folder (CSV / JSON / SQLite / documents).

The model plans while the program holds state: every intermediate result is a result handle (a
session view) that the model sees as `@N` with its metadata, never as rows it must carry or a
name it could mistype. Long answers are templates the program fills. See docs/ask.md.
"""

import importlib

from datasolver.ask.answer import fill_template, has_placeholder, tidy_answer
from datasolver.ask.config import AskConfig, AskLimits
from datasolver.ask.errors import (
    AskError,
    EmptyQuestion,
    GoldenSetError,
    ReservedName,
    UnknownColumn,
    UnknownRelation,
    UnknownResult,
    )
from datasolver.ask.graph import Graph, find_graphs, symmetric_types
from datasolver.ask.handles import Handle, HandleTable
from datasolver.ask.package import DataPackage, open_package
from datasolver.ask.question import CleanQuestion, clean_question, require_question
from datasolver.ask.render import answer_data, describe_handle, render_table
from datasolver.ask.reviewer import Review, parse_verdict
from datasolver.ask.toolbox import AskToolbox, FinalAnswer

__all__ = [
    "NO_QUERY_NOTE",
    "UNBACKED_MARK",
    "Analyst",
    "AskConfig",
    "AskError",
    "AskLimits",
    "AskResult",
    "AskToolbox",
    "CleanQuestion",
    "DataPackage",
    "EmptyQuestion",
    "FinalAnswer",
    "GoldenItem",
    "GoldenReport",
    "GoldenResult",
    "GoldenSetError",
    "Graph",
    "Handle",
    "HandleTable",
    "ReservedName",
    "Review",
    "Step",
    "UnknownColumn",
    "UnknownRelation",
    "UnknownResult",
    "answer_data",
    "ask_data",
    "ask_data_async",
    "clean_question",
    "describe_handle",
    "fill_template",
    "find_graphs",
    "has_placeholder",
    "load_golden",
    "open_package",
    "parse_verdict",
    "render_table",
    "require_question",
    "run_golden",
    "symmetric_types",
    "tidy_answer",
]

# The loop, golden sets and the service talk to a model (the LLM client and its SDK, ~0.3 CPU-s);
# the MCP server and the tools need none of them, so they load on first use.
_MODEL_NAMES = {
    "NO_QUERY_NOTE": "checks", "UNBACKED_MARK": "checks", "Analyst": "loop", "AskResult": "loop", "Step": "reviewer",
    "GoldenItem": "golden", "GoldenReport": "golden", "GoldenResult": "golden", "load_golden": "golden",
    "run_golden": "golden", "ask_data": "service", "ask_data_async": "service",
}


def __getattr__(name: str) -> object:
    module = _MODEL_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
