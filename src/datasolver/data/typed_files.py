"""Files that type their own columns: Stata `.dta` (pandas' reader), SPSS `.sav` / `.zsav` / `.por`
and SAS `.xpt` / `.sas7bdat` (pyreadstat, a light dependency: readstat's C reader), Feather / Arrow
IPC `.feather` / `.arrow` and ORC `.orc` (pyarrow). Each is one table; its columns keep the types the
file gives them (no inference; SPSS and SAS store every number as a double, and a date format becomes
DATE or TIMESTAMP). SAS goes through pyreadstat, not pandas: pandas reads no XPORT v8 file, and gives
a SAS file's text as bytes and an XPORT date as its raw number of seconds.

A value-labelled column (Stata and SPSS value labels, read as a categorical) becomes text: each value
its label; a value the file gives no label keeps its number, written as text beside the labels (`1.0`
as `1`), with a note saying which values. SPSS user-missing values are missing (NULL).

An SPSS or SAS file's shape is read from its header first (`readstat_shape`, at registration): past
the column cap (`input_limits.shape_refusal`) or, a `.zsav` or `.sas7bdat` being compressed, past what
its file may expand to (`input_limits.expansion_refusal`, numbers 8 bytes, text its stored width), it
is not read. Without pyreadstat (an install that left it out) such a file is listed as not read, with
the package to add."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from datasolver.data.errors import SourceSkipped
from datasolver.data.input_limits import expansion_refusal, shape_refusal

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


SPSS_SUFFIXES = (".sav", ".zsav", ".por")
SAS_SUFFIXES = (".xpt", ".sas7bdat")
READSTAT_SUFFIXES = SPSS_SUFFIXES + SAS_SUFFIXES
NUMBER_BYTES = 8


def readstat_shape(path: Path) -> tuple[list[str], int | None]:
    """An SPSS or SAS file's column names and row count (None where the file does not say: `.por`), from its
    header only; SourceSkipped without pyreadstat, for an unreadable header, or past the caps."""
    reader = _readstat_reader(path)
    try:
        _, meta = reader(path, metadataonly=True)
    except Exception as exc:  # noqa: BLE001 - any reader's complaint is this file's note
        reason = f"{type(exc).__name__}: {str(exc)[:200]}"
        raise SourceSkipped(f"not a readable {path.suffix.lower()} file ({reason})") from exc
    names, rows = list(meta.column_names), meta.number_rows
    known = rows if rows is not None and rows >= 0 else None
    if refusal := shape_refusal(known or 0, len(names), (known or 0) * len(names)):
        raise SourceSkipped(f"not loaded: {refusal}")
    if known is not None:
        widths = meta.variable_storage_width or {}
        row_bytes = sum(max(widths.get(name) or 0, NUMBER_BYTES) for name in names)
        if refusal := expansion_refusal(known * row_bytes, path.stat().st_size):
            raise SourceSkipped(f"not loaded: {refusal}")
    return names, known


def _readstat_reader(path: Path) -> Callable[..., tuple[pd.DataFrame, Any]]:
    suffix = path.suffix.lower()
    try:
        import pyreadstat
    except ImportError as exc:
        maker = "SAS" if suffix in SAS_SUFFIXES else "SPSS"
        raise SourceSkipped(f"not read: {maker} {suffix} files are read by the pyreadstat package, which this install "
                            "lacks; install it (pip install pyreadstat) or save the data as CSV or Stata .dta") from exc
    readers = {".por": pyreadstat.read_por, ".xpt": pyreadstat.read_xport, ".sas7bdat": pyreadstat.read_sas7bdat}
    return readers.get(suffix, pyreadstat.read_sav)


def read_typed_file(path: Path) -> tuple[pa.Table, list[str]]:
    """The file's rows as an Arrow table and notes on its columns (SourceSkipped when the reader
    cannot read it)."""
    import pyarrow as pa

    suffix = path.suffix.lower()
    notes: list[str] = []
    try:
        if suffix in (".feather", ".arrow"):
            import pyarrow.feather as feather

            table = feather.read_table(path)
        elif suffix == ".orc":
            import pyarrow.orc as orc

            table = orc.read_table(path)
        else:
            import pandas as pd

            if suffix == ".dta":
                frame = pd.read_stata(path)
            elif suffix in SPSS_SUFFIXES:
                frame, _ = _readstat_reader(path)(path, apply_value_formats=True, formats_as_category=True)
            else:  # SAS: no value labels without a separate format catalog
                frame, _ = _readstat_reader(path)(path)
            notes = _unlabelled_as_text(frame)
            table = pa.Table.from_pandas(frame, preserve_index=False)
    except (SourceSkipped, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - any reader's complaint is this file's note
        raise SourceSkipped(f"not a readable {suffix} file ({type(exc).__name__}: {str(exc)[:200]})") from exc
    return _labels_as_text(table), notes


def _unlabelled_as_text(frame: pd.DataFrame) -> list[str]:
    """A categorical column whose categories are labels and the numbers of unlabelled values (pandas
    reads a partly labelled column so; Arrow cannot hold both) made text in place; a note for each."""
    import pandas as pd

    notes = []
    for name in frame.columns:
        column = frame[name]
        if not isinstance(column.dtype, pd.CategoricalDtype):
            continue
        numbers = [c for c in column.cat.categories if not isinstance(c, str)]
        if not numbers:
            continue
        frame[name] = column.astype(object).map(lambda v: v if isinstance(v, str) or pd.isna(v) else _number_text(v))
        shown = ", ".join(_number_text(n) for n in numbers[:5]) + (", …" if len(numbers) > 5 else "")
        notes.append(f"column {name!r}: {len(numbers)} value(s) with no value label ({shown}) kept as their "
                     "numbers, written as text beside the labels")
    return notes


def _number_text(value: object) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _labels_as_text(table: pa.Table) -> pa.Table:
    import pyarrow as pa

    for i, column in enumerate(table.schema):
        if pa.types.is_dictionary(column.type):
            table = table.set_column(i, column.name, table.column(i).cast(column.type.value_type))
    return table
