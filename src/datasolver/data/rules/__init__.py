"""The rulebook: what the program does to a failed or empty query, or to one whose rows leave part of
the question unanswered, as named rules, one tuple per stage (`data/rules/stages.py`; the shape: `data/rules/protocol.py`; how to add one: docs/rules.md)."""

from datasolver.data.rules.protocol import ResultShape, Rewrite, RuleContext
from datasolver.data.rules.stages import apply_on_empty, apply_on_error, apply_on_rows

__all__ = ["ResultShape", "Rewrite", "RuleContext", "apply_on_empty", "apply_on_error", "apply_on_rows"]
