"""What an answer says of the stored results: the rows and columns of a result it names, and the
values it states that no stored result holds.

Numbers are compared as people write them: an answer's `0.33` names a cell 0.3333 (the cell
rounded to the answer's places), `33.33%` names 0.3333 too, `1,234` names 1234. Text cells are
found in the answer case-insensitively after NFKC (a Latin word whole, CJK text anywhere). The
analyst's answer checks (ask/checks.py) read these facts; nothing here talks to the model.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from datasolver.ask.answer import PLACEHOLDER as _PLACEHOLDER, drop_restated_lead, restates
from datasolver.ask.render import format_value
from datasolver.data import QueryResult

# A number as written in an answer: grouping commas, decimals; not part of a word or code (`m2`,
# `Q3`, `1.5B`), so ASCII letters may not touch it (CJK may: `2019年`).
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![A-Za-z0-9_]|\.\d)(\s*%)?")
_LATIN_WORD = re.compile(r"^[a-z0-9][a-z0-9 .'&-]*$")
_ITEM_SPLIT = re.compile(r"\s*(?:[,，、;；]|\band\b|和|与|及)\s*")
_PARENTHESES = re.compile(r"[(（][^()（）]*[)）]")
_CJK = re.compile(r"[\u3400-\u9fff]")
_ABSENCE = re.compile(r"\b(?:no|none|nothing|not|yes|true|false|neither|both)\b|没有|无|不|否|是的|^是$|^对$|^错$")
MAX_CELL_CHARS = 200  # longer text cells are not looked for in an answer
MAX_ITEM_CHARS = 80  # a list item longer than this is prose, not a value


@dataclass(frozen=True)
class Number:
    """A number written in an answer: its value, its decimal places, and whether a % followed."""

    text: str
    value: Decimal
    places: int
    percent: bool = False

    def names(self, cell: Decimal) -> bool:
        """Whether this number is `cell` as written (rounded to the places shown; ×100 for a %)."""
        candidates = [cell * 100, cell] if self.percent else [cell]
        return any(_rounded(c, self.places) == self.value for c in candidates)


def numbers_in(text: str) -> list[Number]:
    """Every number written in `text` (NFKC first, so full-width digits count)."""
    found = []
    for match in _NUMBER.finditer(unicodedata.normalize("NFKC", text or "")):
        whole, fraction, percent = match.group(1), match.group(2) or "", match.group(3)
        try:
            value = Decimal(whole.replace(",", "") + fraction)
        except InvalidOperation:
            continue
        found.append(Number(match.group(0).strip(), value, max(len(fraction) - 1, 0), bool(percent)))
    return found


def _rounded(value: Decimal, places: int) -> Decimal | None:
    try:
        return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return None


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _cell_number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float, Decimal)):
        try:
            number = Decimal(str(value))
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def _text_named(cell: str, answer: str) -> bool:
    """Whether the folded text cell occurs in the folded answer (a Latin value as whole words)."""
    if not cell or len(cell) > MAX_CELL_CHARS:
        return False
    if _LATIN_WORD.match(cell):
        return re.search(r"(?<![a-z0-9])" + re.escape(cell) + r"(?![a-z0-9])", answer) is not None
    return cell in answer


@dataclass(frozen=True)
class Coverage:
    """Which rows and columns of a result's first rows an answer names."""

    rows: int
    """Rows looked at."""
    rows_named: tuple[int, ...]
    """Indexes of the rows the answer names (a text cell of it, or for a row without text, a number)."""
    columns_named: tuple[str, ...]
    """Columns with at least one cell the answer names, in the result's order."""


def coverage(answer: str, result: QueryResult) -> Coverage:
    """What of `result`'s rows the answer names."""
    folded = _fold(answer)
    numbers = numbers_in(answer)
    named_rows: list[int] = []
    named_columns: set[int] = set()
    for r, row in enumerate(result.rows):
        text_hit = number_hit = has_text = False
        for c, value in enumerate(row):
            number = _cell_number(value)
            if number is not None:
                if any(n.names(number) for n in numbers):
                    number_hit = True
                    named_columns.add(c)
                continue
            text = _fold(format_value(value))
            if not text:
                continue
            number = _text_number(text)
            if number is not None:  # a number stored as text
                if any(n.names(number) for n in numbers):
                    number_hit = True
                    named_columns.add(c)
                continue
            has_text = True
            if _text_named(text, folded):
                text_hit = True
                named_columns.add(c)
        if text_hit or (number_hit and not has_text):
            named_rows.append(r)
    return Coverage(len(result.rows), tuple(named_rows),
                    tuple(result.columns[c] for c in sorted(named_columns)))


def _text_number(text: str) -> Decimal | None:
    """A text cell that is a plain number ("95697.53", "1,234"), as a number."""
    if not re.fullmatch(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?", text.strip()):
        return None
    return Decimal(text.strip().replace(",", ""))


def stray_values(answer: str, question: str, results: Sequence[QueryResult], counts: Iterable[int] = (),
                 sql: Iterable[str] = ()) -> list[str]:
    """The values of `answer` that no result holds: numbers (other than the question's own, those in
    the SQL that made the results, e.g. a filter's threshold, and the results' row counts) and, for a
    list of two or more items (or one name alone), items found in no text cell (a name the question
    gives is no evidence: the real model answered "Los Angeles, Los Angeles" to a question about Los
    Angeles)."""
    cells: list[Decimal] = [Decimal(n) for n in counts]
    texts: list[str] = []
    for result in results:
        for row in result.rows:
            for value in row:
                number = _cell_number(value)
                if number is not None:
                    cells.append(number)
                    continue
                text = format_value(value)
                cells += [n.value for n in numbers_in(text)]
                folded = _fold(text)
                if folded and len(folded) <= MAX_CELL_CHARS:
                    texts.append(folded)
    asked = {n.value for text in (question, *sql) for n in numbers_in(text)}
    stray = [n.text for n in numbers_in(answer)
             if n.value not in asked and not any(n.names(cell) for cell in cells)]
    if _PLACEHOLDER.search(answer):  # a template: its own words label the rows the program writes
        return list(dict.fromkeys(stray))
    listed = drop_restated_lead(answer, question)
    items = [_fold(_PARENTHESES.sub(" ", _NUMBER.sub(" ", item))).strip(" .:：。") for item in
             _ITEM_SPLIT.split(listed)]
    items = [i for i in items if i and len(i) <= MAX_ITEM_CHARS and (_CJK.search(i) or re.search(r"[a-z]", i))]
    # One name alone counts too, where the results hold text to compare it with and it is not a yes,
    # a no or a "nothing matches" (answers no cell holds) nor an answer with a number (the number is).
    if _ABSENCE.search(listed.casefold()):
        return list(dict.fromkeys(stray))
    if len(items) >= 2 or (len(items) == 1 and bool(texts) and not numbers_in(answer)):
        for item in items:
            if restates(item, question) or any(_text_named(t, item) or item in t for t in texts):
                continue
            stray.append(item)
    return list(dict.fromkeys(stray))
