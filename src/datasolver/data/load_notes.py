"""What loading had to say about a file or a table: one typed note that travels with the table.

A note is made once, where the loader learns it (the encoding chosen, rows skipped, characters
replaced, columns left as text, decimal commas read as numbers, a file not read), and every caller
renders the same object: `datasolver tables` and `sql`, the MCP tools, the analyst and the agent's
first prompt. `table` names the canonical table a note is about (None for a file that gave no
table); `Catalog.load_notes(tables)` picks the notes of the tables a query read.
"""

from __future__ import annotations

from dataclasses import dataclass

# What a note is about (its `kind`), so a caller can pick or order them without reading the text.
UNREAD = "unread"  # a file (or a table inside one) that could not be read: its reason
ENCODING = "encoding"  # the file is not UTF-8: which decoding was chosen and on what evidence
REPLACED = "replaced"  # bytes no decoding fits were replaced by U+FFFD
ROWS_SKIPPED = "rows_skipped"  # rows with the wrong number of fields were not loaded
TEXT_COLUMN = "text_column"  # a column that looks typed was left as text, and why
DECIMAL_COMMA = "decimal_comma"  # a column written with decimal commas or thousands points was read as numbers
DATE_STYLE = "date_style"  # a column of dates written day.month.year, day/month/year or month/day/year read as dates
OTHER = "other"  # anything else (hidden files, ignored keys, a derived/ that came with the input)


@dataclass(frozen=True)
class LoadNote:
    """One remark of the loader: the file (`path`, relative to the folder), what it says (`reason`),
    its `kind` and, once names are given, the canonical `table` it concerns."""

    path: str
    reason: str
    kind: str = OTHER
    table: str | None = None

    def line(self) -> str:
        """`csv/r.csv: 2 row(s) with the wrong number of fields not loaded (…)`."""
        return f"{self.path}: {self.reason}"

    def for_table(self, table: str) -> LoadNote:
        return LoadNote(self.path, self.reason, self.kind, table)


def render_notes(notes: list[LoadNote], prefix: str = "note: ") -> list[str]:
    """One line per note, in the one form every caller shows them."""
    return [f"{prefix}{note.line()}" for note in notes]
