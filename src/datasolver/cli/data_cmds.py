"""`datasolver tables` and `datasolver sql`: the data engine for people."""

from __future__ import annotations

from pathlib import Path

import click

from datasolver.data import Catalog, render_result
from datasolver.data.relation import preview
from datasolver.cli.input_options import follow_outside_links
from datasolver.terminal import printable

DEFAULT_SQL_TIMEOUT_S = 300.0


@click.command("tables")
@click.argument("task_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@follow_outside_links
@click.option("--no-load", is_flag=True,
              help="Do not read the tables; show only what headers and metadata tell (fast on huge files).")
def tables_command(task_dir: Path, no_load: bool) -> None:
    """List every table of TASK_DIR (a task folder or any data folder).

    One line per table: canonical name, rows (~ = estimated, ? = unknown without loading),
    columns, source file, aliases and, for tables extracted from documents, their origin. Then
    every file that could not be read, with the reason, and notes such as skipped ragged rows.
    """
    with Catalog.open(task_dir) as catalog:
        if not no_load:
            catalog.load()
        infos = catalog.tables()
        width = max((len(i.name) for i in infos), default=4)
        for info in infos:
            rows = "?" if info.rows is None else (str(info.rows) if info.rows_exact else f"~{info.rows}")
            cols = "?" if info.columns is None else str(len(info.columns))
            line = f"{info.name:<{width}}  rows {rows:>8}  cols {cols:>3}  {info.source_file}"
            if info.aliases:
                line += f"  aliases: {', '.join(info.aliases)}"
            if info.origin:
                line += f"  origin: {info.origin}"
            click.echo(printable(line))  # names, files and origins come from the task's files
        if not infos:
            click.echo("(no tables)")
        for item in catalog.skipped:
            click.echo(printable(f"unreadable: {item.path}: {item.reason}"))
        for item in catalog.notes:
            click.echo(printable(f"note: {item.path}: {item.reason}"))


@click.command("sql")
@click.argument("task_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("query")
@follow_outside_links
@click.option("--limit", default=50, show_default=True, type=click.IntRange(min=0), help="Rows to print.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the full result to this CSV file (UTF-8, header, no index).")
@click.option("--timeout", type=click.FloatRange(min=0), default=DEFAULT_SQL_TIMEOUT_S, show_default=True,
              metavar="SECONDS", help="Stop the query (and the table loads it needs) after this long; 0 = no limit.")
def sql_command(task_dir: Path, query: str, limit: int, csv_path: Path | None, timeout: float) -> None:
    """Run read-only SQL (DuckDB dialect; common MySQL / T-SQL / SQLite slips are repaired)
    over every table of TASK_DIR and print the rewrites applied, the total row count and rows.
    With --csv the query runs once: the rows shown are the first of those written.
    """
    with Catalog.open(task_dir, timeout_s=timeout or None) as catalog:
        relation = catalog.sql(query)
        if csv_path is None:
            result = relation.fetch(limit)
        else:
            result = preview(relation.to_csv(csv_path), limit, relation.rewrites, relation.final_sql or query)
    click.echo(printable(render_result(result), keep_newlines=True))  # cells are the files' text
    if csv_path is not None:
        click.echo(f"wrote {result.total_rows} rows to {csv_path}")


COMMANDS = [tables_command, sql_command]
