"""`--follow-outside-links`: the one opt-in for context links that leave the task folder."""

from __future__ import annotations

import os

import click

from datasolver.data.input_files import FOLLOW_OUTSIDE_ENV, FOLLOW_OUTSIDE_FLAG
from datasolver.data.table_cache import DEFAULT_MAX_BYTES, MAX_ENV as CACHE_MAX_ENV


def _allow(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # The data room's one check reads the variable, so every catalog of this process (and the
    # sandboxed solver.py, which is given it) decides alike.
    if value:
        os.environ[FOLLOW_OUTSIDE_ENV] = "1"


follow_outside_links = click.option(
    FOLLOW_OUTSIDE_FLAG, is_flag=True, expose_value=False, callback=_allow, is_eager=True,
    help="Also read context files that are links leading outside the task folder (default: such "
         "links are skipped with a note; procfs, sysfs and devices are never read). Same as "
         f"{FOLLOW_OUTSIDE_ENV}=1.")


encoding_option = click.option(
    "--encoding", metavar="CODEC",
    help="Decode every CSV file with this encoding (utf-8, gb18030, cp1252, latin-1, …) instead of the one "
         "chosen by evidence among UTF-8, GB18030 and Windows-1252 (a note says which was chosen and why).")

header_row_option = click.option(
    "--header-row", type=click.IntRange(min=1), metavar="N",
    help="The line of every CSV file (and the row of every sheet) that holds the column names. Default: the "
         "first, unless title lines stand above the header (then the header below them, with a note).")

table_cache_option = click.option(
    "--table-cache", metavar="DIR|off",
    help="Where loaded tables are kept for the next command on the same unchanged files (a DuckDB file per "
         "table, reused while its file's size, times and sampled content hash match); `off`: load into a "
         "temporary file each time. Default: $DATASOLVER_TABLE_CACHE, else ~/.cache/datasolver/tables. At most "
         f"${CACHE_MAX_ENV} bytes in all (e.g. 2G; default {DEFAULT_MAX_BYTES >> 30}G): past it the least recently "
         "used tables are removed. Safe to delete; the input folder is never written.")
