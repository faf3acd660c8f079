"""The ask room: a text-answer analyst over any data folder (CSV / JSON / SQLite / documents).

The model plans while the program holds state: every intermediate result is a result handle (a
session view) that the model sees as `@N` with its metadata, never as rows it must carry or a
name it could mistype. Long answers are templates the program fills. See docs/ask.md.
"""

import importlib

from datasolver.ask.config import AskConfig, AskLimits
from datasolver.ask.package import DataPackage, open_package
from datasolver.ask.question import require_question
from datasolver.ask.toolbox import AskToolbox

__all__ = [
    "Analyst",
    "AskConfig",
    "AskLimits",
    "AskToolbox",
    "DataPackage",
    "ask_data",
    "load_golden",
    "open_package",
    "require_question",
    "run_golden",
]

# The loop, golden sets and the service talk to a model (the LLM client and its SDK, ~0.3 CPU-s);
# the MCP server and the tools need none of them, so they load on first use.
_MODEL_NAMES = {"Analyst": "loop", "load_golden": "golden", "run_golden": "golden", "ask_data": "service"}


def __getattr__(name: str) -> object:
    module = _MODEL_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
