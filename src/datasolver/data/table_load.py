"""One source's table into DuckDB: by DuckDB's own scan where the loader adds nothing, in Python where it must.

- CSV: a UTF-8 file (most are) is read by DuckDB's `read_csv`, in parallel, straight into the typed
  table (`infer_types.materialize_from`). A file that scan cannot read as the header says (ragged
  rows, a stray quote) or that is not UTF-8 takes the careful way: its encoding chosen by evidence
  (`encoding.choose_encoding`), a UTF-8 copy when it is another encoding, then the scan again, or
  Arrow's reader, which skips ragged rows and counts them. Each step that changed something leaves
  a note.
- Parquet: DuckDB's `read_parquet`, types as the file has them, once one streaming pass has counted
  what its values take decoded (`parquet_table_bytes`): a file that would expand past
  `input_limits.expansion_refusal` is not loaded (nor read straight by a query), with the reason.
- Everything else (JSON, SQLite, Excel) is read in Python into Arrow and typed by the same rules.

A source may also offer a `scan`: the typed relation over its file, which a query can read before
the table is loaded (`Catalog.open(..., scan_before_load=True)`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from datasolver.data.csv_source import CsvHead, directly_scannable, read_csv_header, read_csv_text, scan_sql, sql_literal
from datasolver.data.encoding import EncodingChoice, check_codec, choose_encoding, transcode
from datasolver.data.errors import SourceSkipped, SourceStopped
from datasolver.data.infer_types import checked_relation, materialize, materialize_from
from datasolver.data.input_limits import expansion_refusal, shape_refusal
from datasolver.data.load_notes import ENCODING, REPLACED, ROWS_SKIPPED
from datasolver.data.names import quote_ident

Notes = list[tuple[str, str]]
UTF8 = ("utf-8", "utf-8-sig")
FIXED_VALUE_BYTES = 8  # what a number, date or flag counts for in a table's decoded size

if TYPE_CHECKING:  # pyarrow (~0.3 CPU-s to import) loads where a source is read, not for cached tables
    import pyarrow as pa



@dataclass
class LoadContext:
    """Where a source loads its table: the connection, the table's name, a scratch folder for
    temporary files (the loader may read it), and the stop flag of the operation."""

    conn: duckdb.DuckDBPyConnection
    target: str
    scratch: Path
    stop: Callable[[], bool]

    def check_stopped(self) -> None:
        if self.stop():
            raise SourceStopped("stopped before the table was written")


def _utf8_as_read(head: CsvHead, encoding: str | None) -> bool:
    forced = check_codec(encoding) if encoding else None
    return head.codec in UTF8 and (forced is None or forced in ("utf-8", "utf-8-sig"))


def load_csv(ctx: LoadContext, path: Path, head: CsvHead, encoding: str | None) -> Notes:
    """The CSV file at `path` as table `ctx.target` (see the module docstring); returns its notes."""
    if _utf8_as_read(head, encoding) and directly_scannable(head):
        try:
            return materialize_from(ctx.conn, ctx.target, scan_sql(path, head), head.names, head.names,
                                    decimal_comma=head.decimal_comma).notes
        except duckdb.InterruptException:
            raise
        except duckdb.Error:  # not what the header says, or not UTF-8: the careful way below
            ctx.conn.execute(f"DROP TABLE IF EXISTS {quote_ident(ctx.target)}")
    ctx.check_stopped()
    choice = choose_encoding(path, encoding, ctx.stop)
    notes: Notes = []
    source = path
    if choice.codec not in UTF8 or choice.replaced:
        source = ctx.scratch / f"decoded-{uuid.uuid4().hex}.csv"
    try:
        if source != path:
            replaced = transcode(path, source, choice, ctx.stop)
            notes += _encoding_notes(choice, replaced, encoding)
        text_head = read_csv_header(source, "utf-8", head.skip + 1) if source != path else head
        if source != path and directly_scannable(text_head):
            try:
                return notes + materialize_from(ctx.conn, ctx.target, scan_sql(source, text_head), text_head.names,
                                                text_head.names, decimal_comma=text_head.decimal_comma).notes
            except duckdb.InterruptException:
                raise
            except duckdb.Error:
                ctx.conn.execute(f"DROP TABLE IF EXISTS {quote_ident(ctx.target)}")
        read = read_csv_text(source, text_head, ctx.stop)
        if skipped := read.skipped_note():
            notes.append((ROWS_SKIPPED, skipped))
        ctx.check_stopped()
        typing = materialize(ctx.conn, ctx.target, read.table, list(read.table.column_names),
                             decimal_comma=text_head.decimal_comma)
        return notes + typing.notes
    finally:
        if source != path:
            source.unlink(missing_ok=True)


def _encoding_notes(choice: EncodingChoice, replaced: int, asked: str | None) -> Notes:
    if choice.replaced:
        what = f"{replaced:,} character(s) that do not decode replaced by U+FFFD"
        if asked:
            return [(REPLACED, f"{what} (read as {choice.label}, as --encoding asks)")]
        return [(REPLACED, f"{what}: {choice.evidence}")]
    if asked or choice.codec in UTF8:
        return []
    return [(ENCODING, choice.evidence)]


def csv_scan(conn: duckdb.DuckDBPyConnection, path: Path, head: CsvHead, encoding: str | None) -> str | None:
    """The typed relation DuckDB reads straight from a UTF-8 CSV file, for a query before the table
    is loaded; None when the file must be loaded (another encoding, one column, a head the strict
    scan cannot read). A later row the scan cannot read fails that query; the caller then loads."""
    if not (_utf8_as_read(head, encoding) and directly_scannable(head)):
        return None
    try:
        return checked_relation(conn, scan_sql(path, head), head.names, head.names, head.decimal_comma)
    except duckdb.InterruptException:
        raise
    except (duckdb.Error, ValueError):
        return None


def parquet_shape(path: Path) -> tuple[list[str], int]:
    """A Parquet file's column names and row count, from its footer only; SourceSkipped past the
    column cap (`input_limits.shape_refusal`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path).metadata
    except (pa.ArrowException, OSError) as exc:
        raise SourceSkipped(f"not a readable Parquet file ({str(exc)[:200]})") from exc
    names = list(meta.schema.names)
    if refusal := shape_refusal(meta.num_rows, len(names), meta.num_rows * len(names)):
        raise SourceSkipped(f"not loaded: {refusal}")
    return names, meta.num_rows


def parquet_scan(conn: duckdb.DuckDBPyConnection, path: Path) -> str | None:
    """The relation a query reads straight from a Parquet file; None when the file may not become a
    table (`parquet_refusal`: the query then loads it, and the load says why not)."""
    try:
        return None if parquet_refusal(conn, path) else _parquet_sql(path)
    except duckdb.InterruptException:
        raise
    except (duckdb.Error, OSError):  # an unreadable file: the load says why
        return None


def load_parquet(ctx: LoadContext, path: Path) -> Notes:
    """A Parquet file as it is typed: DuckDB reads it directly, unless its values would take more
    than its size allows (SourceSkipped with the reason)."""
    if refusal := parquet_refusal(ctx.conn, path):
        raise SourceSkipped(f"not loaded: {refusal}")
    ctx.check_stopped()
    ctx.conn.execute(f"CREATE TABLE {quote_ident(ctx.target)} AS {_parquet_sql(path)}")
    return []


def parquet_refusal(conn: duckdb.DuckDBPyConnection, path: Path) -> str | None:
    """Why the Parquet file at `path` may not become a table (`input_limits.expansion_refusal`), or None."""
    return expansion_refusal(parquet_table_bytes(conn, path), path.stat().st_size)


def parquet_table_bytes(conn: duckdb.DuckDBPyConnection, path: Path) -> int:
    """What a Parquet file's values take decoded: text and blobs as long as they are, nested values
    as long as their text, every other value FIXED_VALUE_BYTES. One streaming pass of DuckDB over the
    file (lengths only: a dictionary-encoded text is never copied), interruptible like any query."""
    relation = conn.sql(_parquet_sql(path))
    sums, fixed = [], 0
    for name, kind in zip(relation.columns, relation.types):
        ident, kind = quote_ident(name), str(kind).upper()
        if kind in ("VARCHAR", "JSON"):
            sums.append(f"sum(strlen({ident}))")
        elif kind in ("BLOB", "BIT"):
            sums.append(f"sum(octet_length({ident}))")
        elif kind.endswith("]") or kind.startswith(("STRUCT", "MAP", "UNION", "VARIANT")):
            sums.append(f"sum(strlen(CAST({ident} AS VARCHAR)))")
        else:
            fixed += 1
    row = conn.execute(f"SELECT count(*), {', '.join(sums) or '0'} FROM ({_parquet_sql(path)})").fetchone()
    return row[0] * fixed * FIXED_VALUE_BYTES + sum(int(v or 0) for v in row[1:])


def _parquet_sql(path: Path) -> str:
    return f"SELECT * FROM read_parquet({sql_literal(os.fspath(path))})"


def load_arrow(ctx: LoadContext, table: pa.Table, infer: list[str]) -> Notes:
    """Rows read in Python (JSON, SQLite, Excel), their text columns typed by the rules."""
    return materialize(ctx.conn, ctx.target, table, infer).notes
