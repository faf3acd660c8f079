"""Files that type their own columns, read through the libraries datasolver already depends on:
Stata `.dta` and SAS `.xpt` / `.sas7bdat` (pandas' own readers, no extra package), Feather / Arrow
IPC `.feather` / `.arrow` and ORC `.orc` (pyarrow). Each is one table; its columns keep the types
the file gives them (no inference). A value-labelled column (Stata value labels, read by pandas as a
categorical) becomes text: each value its label; a value the file gives no label keeps its number,
written as text beside the labels (`1.0` as `1`), with a note saying which values. SPSS `.sav` needs
pyreadstat, which is not installed: such files are listed as not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from datasolver.data.errors import SourceSkipped

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


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
            else:
                frame = pd.read_sas(path, format="xport" if suffix == ".xpt" else "sas7bdat")
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
