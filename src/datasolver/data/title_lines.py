"""Where a table's header row is when title lines stand above it (CSV files and sheets alike).

A file may open with a title (`Gapminder data`, `Source: World Bank`) or, as scikit-learn ships
its datasets, a line of counts (`569,30,malignant,benign`) before the header. Read as the header,
such a line makes a one-column table, or one whose every data row is ragged (no rows at all).
DuckDB's sniffer finds the header below them; so does this rule, on the rows of the file's head:

- the rows under the first one agree on a width (the most common one, `mode`), and the first row
  is narrower than that;
- the header is the first row (within MAX_TITLE_LINES) of that width whose cells are all names
  (none a number), and at least 80% of the rows under it have the width too;
- every row above it holds at most half as many cells (a title, a line of counts): a header only
  a little narrower than its rows (a trailing delimiter on each data row) stays the header.

Anything else keeps the first row as the header, as before. `--header-row N` sets it instead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

MAX_TITLE_LINES = 20
AGREEING_SHARE = 0.8
_NUMBER = re.compile(r"\s*[-+]?(\d[\d,.\s]*|\.\d+)([eE][-+]?\d+)?%?\s*")


def is_number(text: str) -> bool:
    return bool(_NUMBER.fullmatch(text))


def header_index(widths: Sequence[int], names_only: Sequence[bool]) -> int:
    """The index of the header row among the head's rows, given each row's width (cells that hold
    something) and whether all its cells are names; 0 unless title lines stand above it."""
    if len(widths) < 3:
        return 0
    mode = Counter(widths[1:]).most_common(1)[0][0]
    if mode < 2 or widths[0] >= mode:
        return 0
    for i in range(1, min(MAX_TITLE_LINES, len(widths) - 2) + 1):
        if widths[i - 1] > mode // 2:
            return 0
        if widths[i] == mode and names_only[i]:
            rest = widths[i + 1:]
            return i if sum(w == mode for w in rest) >= AGREEING_SHARE * len(rest) else 0
    return 0


def title_lines_note(skip: int, above: str, unit: str = "line") -> str:
    """What a table read below title lines says (a CSV file's note, a sheet's)."""
    return (f"header read from {unit} {skip + 1}: the {skip} {unit}(s) above it are not part of the table "
            f"(the first: {above!r}); --header-row N sets the header's {unit}")
