"""Files that type their own columns, read through the libraries datasolver already depends on:
Stata `.dta` and SAS `.xpt` / `.sas7bdat` (pandas' own readers, no extra package), Feather / Arrow
IPC `.feather` / `.arrow` and ORC `.orc` (pyarrow). Each is one table; its columns keep the types
the file gives them (no inference). Categorical columns (Stata value labels) become their labels as
text. SPSS `.sav` needs pyreadstat, which is not installed: such files are listed as not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from datasolver.data.errors import SourceSkipped

if TYPE_CHECKING:
    import pyarrow as pa


def read_typed_file(path: Path) -> pa.Table:
    """The file's rows as an Arrow table (SourceSkipped when the reader cannot read it)."""
    import pyarrow as pa

    suffix = path.suffix.lower()
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
            table = pa.Table.from_pandas(frame, preserve_index=False)
    except (SourceSkipped, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - any reader's complaint is this file's note
        raise SourceSkipped(f"not a readable {suffix} file ({type(exc).__name__}: {str(exc)[:200]})") from exc
    return _labels_as_text(table)


def _labels_as_text(table: pa.Table) -> pa.Table:
    import pyarrow as pa

    for i, column in enumerate(table.schema):
        if pa.types.is_dictionary(column.type):
            table = table.set_column(i, column.name, table.column(i).cast(column.type.value_type))
    return table
