"""The rulebook: what the program does to a failed or empty query, as named rules, one tuple per stage
(`rules/stages.py`; the shape: `rules/protocol.py`; how to add one: docs/rules.md)."""

from datasolver.rules.protocol import Rewrite, RuleContext
from datasolver.rules.stages import apply_on_empty, apply_on_error

__all__ = ["Rewrite", "RuleContext", "apply_on_empty", "apply_on_error"]
