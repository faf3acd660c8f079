"""Fit the first prompt into a token budget by folding the least relevant tables.

`fit_brief(brief, budget_tokens)` is the one entry point: it returns the brief whose user prompt
(knowledge, evidence hints, files, tables, question) is estimated at most `budget_tokens`, folding
tables to one line each, least relevant first, only as far as needed. The unit of folding is a
schema group (a table of its own is a group of one): a group's tables are one line each already,
so only dropping its shared column block saves space; it is as relevant as its best table. Folded tables stay named
and queryable. When even every table folded is over the budget, the all-folded brief comes back
(the caller can compare `first_prompt_tokens` with its budget). Fitting is cheap and repeatable:
the brief keeps the full digest, so a larger budget unfolds tables again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from datasolver.agent.assemble import build_user_prompt
from datasolver.agent.brief import TaskBrief
from datasolver.agent.limits import Limits
from datasolver.agent.relevance import rank_least_relevant_first
from datasolver.agent.tokens import estimate_tokens

# Sized for a 32k-token context window (Limits.prompt_budget): the rules and tool schemas come on
# top, and the conversation needs most of the window for tool results and the model's own turns.
DEFAULT_PROMPT_BUDGET = Limits().prompt_budget
# The units never folded: the most relevant one, and up to this many in all when the question linking
# links each strongly (a table scored at least LINKED_SHARE of the best table's score). The linking puts
# every gold table in its top 3 on 95% of the dev tasks (benchmarks/linking.py); on a slow server a budget
# of ~950 tokens once kept only the first, and the real 1.5B model guessed the columns of the folded
# second (`fare_cost` for fare's round_trip_cost; the one-shot prompt shows every table in full).
KEPT_LINKED_UNITS = 3
LINKED_SHARE = 0.4


def first_prompt_tokens(brief: TaskBrief, evidence_hints: str = "") -> int:
    """Estimated tokens of the first user message (the rules' system message not included)."""
    return estimate_tokens(build_user_prompt(brief, evidence_hints))


def fit_brief(
    brief: TaskBrief,
    budget_tokens: int,
    *,
    evidence_hints: str = "",
    relevance: Mapping[str, float] | None = None,
) -> TaskBrief:
    """The brief with the fewest least-relevant tables folded so the first prompt fits the budget.

    ``relevance`` is per-table vote counts (`vote_table_relevance`); without it, word overlap
    with the question ranks the tables. A brief without a digest is returned unchanged.
    """
    if budget_tokens < 1:
        raise ValueError(f"budget_tokens must be positive, got {budget_tokens}")
    digest = brief.digest
    if digest is None:
        return brief
    ranked = rank_least_relevant_first(digest, brief.question, relevance or brief.link_scores() or None)
    position = {name: i for i, name in enumerate(ranked)}
    # Look-alikes the question linking ruled out stay folded whatever the budget.
    always = tuple(brief.lookalikes)
    # A schema group is as relevant as its most relevant table; least relevant units fold first.
    units = sorted((u for u in (tuple(n for n in unit if n not in always) for unit in digest.fold_units()) if u),
                   key=lambda unit: max(position[n] for n in unit))

    def folded(count: int) -> TaskBrief:
        chosen = always + tuple(name for unit in units[:count] for name in unit)
        return dataclasses.replace(brief, tables=digest.render(chosen), folded=chosen)

    def fits(candidate: TaskBrief) -> bool:
        return first_prompt_tokens(candidate, evidence_hints) <= budget_tokens

    candidate = folded(0)
    # The shortest prefix of the units that fits; the most relevant unit, and the strongly linked ones
    # (`kept_units`), are never folded: a prompt still over budget is cut in knowledge.md instead (a small
    # model that saw no table's columns guessed the table: 7 of 7 folded on a slow server, the answer
    # read a neighbouring month's table).
    for count in range(1, len(units) - kept_units(units, brief.link_scores()) + 1):
        if fits(candidate):
            return candidate
        candidate = folded(count)
    return candidate


def kept_units(units: list[tuple[str, ...]], link_scores: Mapping[str, float]) -> int:
    """How many of the most relevant `units` are never folded: 1, or up to KEPT_LINKED_UNITS when
    that many hold a table the question linking links strongly (LINKED_SHARE of the best score)."""
    best = max(link_scores.values(), default=0.0)
    if best <= 0:
        return min(1, len(units))
    strong = {name for name, score in link_scores.items() if score >= LINKED_SHARE * best}
    linked = sum(1 for unit in units if strong.intersection(unit))
    return min(len(units), max(1, min(KEPT_LINKED_UNITS, linked)))
