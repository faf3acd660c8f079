"""Linking's signals: how much each thing a table shares with the question counts, and what it says.

Question linking (`data/linking.py`) finds, once per question, what each table shares with it (a
`TableFacts`: the months and years its name carries, the question's terms in its name and in
knowledge.md's text on it, the columns the question names, the question's values in its data).
Each signal here weighs one kind of those facts: `find` returns the signal's hits on one table, each
with its strength and the reason the rendered links say; the table's score is the sum over
`LINK_SIGNALS` of each signal's weight times its hits' strengths (`signal_score`). A hit carries its
signal's name, so the links (`TableLink.hits`) say which signal ranked a table, and
`link_question(signals=…)` leaves a signal out by name.

Bounded: the signals read only those facts, found in the question's first `MAX_LINKED_CHARS`
characters; a table's links say at most `SHOWN_COLUMNS` part-named columns and `SHOWN_VALUES`
values (the rest count, unsaid).

The signals, their weights and what each rewards are listed in docs/rules.md ("Linking signals").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

SHOWN_VALUES = 3  # value hits said per table (the most distinctive)
SHOWN_COLUMNS = 3  # column names said per table (the question's whole names; its parts of names)
SHOWN_KNOWLEDGE_TERMS = 6  # shared words of knowledge.md's text said per table

MONTH_IN_NAME_WEIGHT = 4.0
YEAR_IN_NAME_WEIGHT = 1.5
OTHER_PERIOD_WEIGHT = -1.0
NAME_TERMS_WEIGHT = 1.0
KNOWLEDGE_WEIGHT = 0.35  # a shared word of knowledge.md's text on a table counts this much of a name's
COLUMN_WEIGHT = 0.5
COLUMNS_COUNTED = 4  # columns the question names that count, per table
VALUE_WEIGHT = 3.0
OTHER_FORM_VALUE_WEIGHT = 2.0  # a value found as the same month written otherwise, or spelt nearly


@dataclass(frozen=True)
class QuestionFacts:
    """The periods the question names: the months (YYYY-MM) and years (YYYY) of its dates."""

    months: frozenset[str] = frozenset()
    years: frozenset[str] = frozenset()


@dataclass(frozen=True)
class FoundValue:
    """A value of the question found in one of the table's columns."""

    value: str
    reason: str  # how the links say it: "column city has the value 'Lyon'"
    exact: bool  # as written (normalized), not the same month otherwise written or a near spelling
    tables: int = 1  # tables that hold it (a value many tables hold tells them apart less)


@dataclass(frozen=True)
class TableFacts:
    """What one table shares with the question, found by `data/linking.py` for the signals to weigh."""

    name: str
    months: frozenset[str] = frozenset()  # months its name carries
    years: frozenset[str] = frozenset()  # years its name carries
    name_terms: tuple[tuple[str, float], ...] = ()  # the question's terms in its name, each with its weight
    name_words: tuple[str, ...] = ()  # the weighed terms as the name writes them, for the reason
    knowledge_terms: tuple[tuple[str, float], ...] = ()  # the question's words in knowledge.md's text on it
    columns: tuple[tuple[str, str], ...] = ()  # (column, the question's run in its name; "" for its whole name)
    values: tuple[FoundValue, ...] = ()


@dataclass(frozen=True)
class LinkHit:
    """One finding of a signal on a table: its strength (the signal's weight multiplies it) and why."""

    signal: str
    reason: str
    strength: float = 1.0
    said: bool = True  # False: it counts, but the links say no more of this signal (past a SHOWN_* bound)


@dataclass(frozen=True)
class LinkSignal:
    """A named scoring rule of linking: `find(question, table)` returns its hits on the table.

    A `veto` signal is applied after the others: a table it hits scores min(score, 0) + weight, below
    every table nothing links. `most` caps the strength counted per table (0: no cap)."""

    name: str
    weight: float
    find: Callable[[QuestionFacts, TableFacts], list[LinkHit]]
    most: float = 0.0
    veto: bool = False

    @property
    def doc(self) -> str:
        return (self.find.__doc__ or "").strip()


def month_in_name(question: QuestionFacts, table: TableFacts) -> list[LinkHit]:
    """The table's name carries a month the question names (`sales_2022_07`, `…2021年08月…`)."""
    same = sorted(table.months & question.months) if question.months else []
    return [LinkHit("month_in_name", f"its name says {', '.join(same)}")] if same else []


def year_in_name(question: QuestionFacts, table: TableFacts) -> list[LinkHit]:
    """The table's name carries a year the question names, or the year of a month it names (not read
    when both name months: then the month decides)."""
    if (question.months and table.months) or not (question.years or question.months) or not table.years:
        return []
    same = sorted(table.years & _wanted_years(question))
    return [LinkHit("year_in_name", f"its name says {', '.join(same)}")] if same else []


def other_period(question: QuestionFacts, table: TableFacts) -> list[LinkHit]:
    """The table's name carries a month or year, none of them the question's: the table is for another
    period, and ranks below every table nothing links (a veto)."""
    if question.months and table.months:
        if table.months & question.months:
            return []
        said, asked = table.months, question.months
    elif (question.years or question.months) and table.years:
        wanted = _wanted_years(question)
        if table.years & wanted:
            return []
        said, asked = table.years, wanted
    else:
        return []
    return [LinkHit("other_period", f"its name says {', '.join(sorted(said))}, the question "
                                    f"{', '.join(sorted(asked))}")]


def _wanted_years(question: QuestionFacts) -> frozenset[str]:
    return question.years | {month[:4] for month in question.months}


def name_terms(question: QuestionFacts, table: TableFacts) -> list[LinkHit]:
    """The table's name holds the question's terms (CJK pairs, Latin word stems, question words a
    one-word name is made of), each weighed by its rarity among the table names (a term every name
    has counts nothing)."""
    strength = math.fsum(weight for _, weight in table.name_terms)
    if strength <= 0:
        return []
    return [LinkHit("name_terms", "its name shares " + ", ".join(table.name_words), strength)]


def knowledge_text(question: QuestionFacts, table: TableFacts) -> list[LinkHit]:
    """knowledge.md's section on the table shares words with the question, each weighed by its rarity
    among the tables' sections (a word half of them have counts nothing)."""
    strength = math.fsum(weight for _, weight in table.knowledge_terms)
    if strength <= 0:
        return []
    words = sorted(term for term, _ in table.knowledge_terms)[:SHOWN_KNOWLEDGE_TERMS]
    return [LinkHit("knowledge_text", "knowledge.md's text on it shares " + ", ".join(words), strength)]


def column_named(question: QuestionFacts, table: TableFacts) -> list[LinkHit]:
    """The question uses a column's name (its CJK base, every word of a Latin name, or its meaning in
    knowledge.md), or a CJK run of it no other column name holds ("开发" of 集团开发商); each column
    counts, up to COLUMNS_COUNTED."""
    whole = [column for column, run in table.columns if not run]
    parts = [(column, run) for column, run in table.columns if run]
    hits = [LinkHit("column_named", "the question uses column " + ", ".join(whole[:SHOWN_COLUMNS]), len(whole))
            ] if whole else []
    return hits + [LinkHit("column_named", f"column {column} has the question's {run} in its name",
                           said=number < SHOWN_COLUMNS) for number, (column, run) in enumerate(parts)]


def value_found(question: QuestionFacts, table: TableFacts) -> list[LinkHit]:
    """A value the question names is in one of the table's columns: exactly (normalized) counts the
    weight, as the same month written otherwise or spelt nearly OTHER_FORM_VALUE_WEIGHT; either
    divided by the number of tables that hold the value. Said most distinctive first (held by fewest
    tables, then the longest)."""
    shown = sorted(table.values, key=lambda found: (found.tables, -len(found.value)))
    return [LinkHit("value_found", found.reason,
                    (1.0 if found.exact else OTHER_FORM_VALUE_WEIGHT / VALUE_WEIGHT) / found.tables,
                    said=number < SHOWN_VALUES) for number, found in enumerate(shown)]


LINK_SIGNALS: tuple[LinkSignal, ...] = (
    LinkSignal("month_in_name", MONTH_IN_NAME_WEIGHT, month_in_name),
    LinkSignal("year_in_name", YEAR_IN_NAME_WEIGHT, year_in_name),
    LinkSignal("other_period", OTHER_PERIOD_WEIGHT, other_period, veto=True),
    LinkSignal("name_terms", NAME_TERMS_WEIGHT, name_terms),
    LinkSignal("knowledge_text", KNOWLEDGE_WEIGHT, knowledge_text),
    LinkSignal("column_named", COLUMN_WEIGHT, column_named, most=COLUMNS_COUNTED),
    LinkSignal("value_found", VALUE_WEIGHT, value_found),
)
"""Linking's signals, in the order a table's links say their reasons."""


def signal_hits(question: QuestionFacts, table: TableFacts,
                signals: Sequence[LinkSignal] = LINK_SIGNALS) -> list[tuple[LinkSignal, list[LinkHit]]]:
    """Each signal with its hits on the table (signals without a hit left out)."""
    found = [(signal, signal.find(question, table)) for signal in signals]
    return [(signal, hits) for signal, hits in found if hits]


def signal_score(hits: Sequence[tuple[LinkSignal, Sequence[LinkHit]]]) -> float:
    """A table's score: each signal's weight times its hits' strengths (capped at its `most`), summed;
    then each veto signal that hit: min(score, 0) + its weight. Sums are exact (`math.fsum`), so the
    score does not depend on the order the facts were found in (a set's order changes with
    PYTHONHASHSEED, and tied tables were ordered by it)."""
    parts = []
    for signal, found in hits:
        if signal.veto:
            continue
        strength = math.fsum(hit.strength for hit in found)
        parts.append(signal.weight * (min(strength, signal.most) if signal.most else strength))
    total = math.fsum(parts)
    for signal, _ in hits:
        if signal.veto:
            total = min(total, 0.0) + signal.weight
    return total


def signal_reasons(hits: Sequence[tuple[LinkSignal, Sequence[LinkHit]]]) -> list[str]:
    """What a table's links say: every hit said, in the signals' order."""
    return [hit.reason for _, found in hits for hit in found if hit.said]
