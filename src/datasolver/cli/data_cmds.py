"""`datasolver tables` and `datasolver sql`: the data engine for people."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from datasolver.cli.input_options import encoding_option, follow_outside_links, header_row_option, table_cache_option
from datasolver.cli.load_progress import run_catalog_work
from datasolver.data import Catalog, TableCache, render_notes
from datasolver.data.cache_fill import BACKGROUND_BYTES, FillJob, fill_later
from datasolver.data.errors import QueryInterrupted, ResultTooLarge
from datasolver.data.results import FORMATS, QueryResult, format_result, listing_json, rewrites_note
from datasolver.documents.cache import CACHE_ENV, document_tables
from datasolver.terminal import printable

DEFAULT_SQL_TIMEOUT_S = 300.0
TERMINAL_ROWS = 50  # rows shown on a terminal (and beside --csv FILE) when no --limit is given
WHOLE = 1 << 62  # "no limit" for `Relation.fetch`
STDIN = "-"

_doc_cache_option = click.option(
    "--doc-cache", metavar="DIR|off",
    help=f"Where document tables (Markdown / PDF tables) are extracted on first use and reused; `off`: a "
         f"temporary folder each time. Default: ${CACHE_ENV}, else ~/.cache/datasolver/documents. "
         "The input folder is never written.")


@click.command("tables")
@click.argument("task_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@follow_outside_links
@click.option("--no-load", is_flag=True,
              help="Do not read the tables; show only what headers and metadata tell (fast on huge files). "
                   "Documents are then read only from the document cache.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object instead: every table with its rows, columns and their types (types once "
                   "loaded: with --no-load, only those of tables in the table cache), then the files not read and the "
                   "notes, each with its reason.")
@click.option("--timeout", type=click.FloatRange(min=0), default=DEFAULT_SQL_TIMEOUT_S, show_default=True,
              metavar="SECONDS", help="Stop loading after this long (0 = no limit): the tables not loaded by then "
                                      "are listed from their headers and metadata, with a note.")
@_doc_cache_option
@encoding_option
@header_row_option
@table_cache_option
def tables_command(task_dir: Path, no_load: bool, as_json: bool, timeout: float, doc_cache: str | None,
                   encoding: str | None, header_row: int | None, table_cache: str | None) -> None:
    """List every table of TASK_DIR (a task folder or any data folder).

    One line per table: canonical name, rows (~ = estimated, ? = unknown without loading),
    columns, source file, aliases and, for tables extracted from documents, their origin. Then
    every file that could not be read, with the reason, every document that gave no table
    (`unread document: …`, with the reason), and notes such as skipped ragged rows, the encoding
    chosen for a file that is not UTF-8 or columns left as text. Document tables are the ones the
    agent sees: the same extraction, the same names. Loaded tables are kept in the table cache, so
    the next command on the same unchanged files reads none of them again.
    """
    with document_tables(task_dir, cache=doc_cache, extract=not no_load) as docs, \
            Catalog.open(task_dir, extra_derived=docs.extra_derived, encoding=encoding, header_row=header_row,
                         table_cache=TableCache.from_setting(table_cache)) as catalog:
        stopped_note = None
        if not no_load:
            try:
                run_catalog_work(catalog, lambda: catalog.load(timeout_s=timeout or None))
            except QueryInterrupted:
                stopped_note = (f"loading stopped at the {timeout:g} s timeout; tables not loaded by then show "
                                "what their headers and metadata tell (--timeout SECONDS, 0 = no limit)")
        infos = catalog.tables()
        reused = catalog.reused_tables()
        cache_note = (f"{len(reused)} of {len(infos)} table(s) read from the table cache ({catalog.table_cache.root}), "
                      "not from their files") if reused else None
        if as_json:
            unreadable = [(i.path, i.reason) for i in catalog.skipped] + [(d.source, d.reason) for d in docs.unread]
            notes = [(i.path, i.reason) for i in catalog.notes] + [(None, line) for line in docs.warnings + docs.notes]
            notes += [(None, note) for note in (cache_note, stopped_note) if note]
            click.echo(listing_json(infos, unreadable, notes), nl=False)
            return
        width = max((len(i.name) for i in infos), default=4)
        for info in infos:
            rows = info.rows_label
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
        for doc in docs.unread:
            click.echo(printable(f"unread document: {doc.source}: {doc.reason}"))
        for item in catalog.notes:
            click.echo(printable(f"note: {item.path}: {item.reason}"))
        for line in docs.warnings + docs.notes:
            click.echo(printable(f"note: {line}"))
        for note in (cache_note, stopped_note):
            if note:
                click.echo(printable(f"note: {note}"))


class _SqlCommand(click.Command):
    """`datasolver sql`, whose query may start with a `--` comment: such an argument cannot be an
    option (an option name holds no whitespace), so it is read as the query, not refused as an
    unknown option."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, queries_behind_separator(args))


def queries_behind_separator(args: list[str]) -> list[str]:
    """`args` with every argument that starts with `-` and has whitespace in its name part moved
    behind the `--` separator (where click takes arguments literally), order kept."""
    cut = args.index("--") if "--" in args else len(args)
    head, tail = args[:cut], args[cut + 1:]
    moved = [a for a in head if a.startswith("-") and any(c.isspace() for c in a.split("=", 1)[0])]
    if not moved:
        return args
    return [a for a in head if a not in moved] + ["--", *moved, *tail]


def read_query(query: str | None, query_file: Path | None) -> str:
    """The SQL text from the QUERY argument, stdin (`-`) or --file."""
    if query is not None and query_file is not None:
        raise click.UsageError("give the query either as QUERY or with --file, not both")
    if query_file is not None:
        text = query_file.read_text(encoding="utf-8-sig")
    elif query == STDIN:
        text = sys.stdin.read()
    elif query is None:
        raise click.UsageError("no query: give QUERY, `-` to read it from stdin, or --file FILE")
    else:
        text = query
    if not text.strip():
        raise click.UsageError("the query is empty")
    return text


@click.command("sql", cls=_SqlCommand)
@click.argument("task_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("query", required=False)
@click.option("--file", "query_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Read the query from this file (UTF-8) instead of QUERY.")
@follow_outside_links
@click.option("--limit", default=None, type=click.IntRange(min=0),
              help=f"Rows to print; a result with more says so (`rows: 50 of 1200 (truncated)`). Default: "
                   f"{TERMINAL_ROWS} on a terminal without --format (and beside --csv FILE); with --format or "
                   "in a pipe, the whole result.")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default=None,
              help="How the rows are printed: table (aligned; the default on a terminal), tsv (the default in a "
                   "pipe; NULL is \\N, a tab, newline or backslash in a value is \\t, \\n, \\\\), csv (NULL an empty "
                   "field, the empty text \"\"), json (one object: columns, rows, row_count, truncated, rewrites), "
                   "markdown. Only the rows go to stdout; notes go to stderr.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path, allow_dash=True),
              help="Also write the full result to this CSV file (UTF-8, header, as --format csv); `-` writes the "
                   "full result as CSV to stdout instead of the rows.")
@click.option("--timeout", type=click.FloatRange(min=0), default=DEFAULT_SQL_TIMEOUT_S, show_default=True,
              metavar="SECONDS", help="Stop the query (and the table loads it needs) after this long; 0 = no limit.")
@_doc_cache_option
@encoding_option
@header_row_option
@table_cache_option
def sql_command(task_dir: Path, query: str | None, query_file: Path | None, limit: int, output_format: str | None,
                csv_path: Path | None, timeout: float, doc_cache: str | None, encoding: str | None,
                header_row: int | None, table_cache: str | None) -> None:
    """Run read-only SQL (DuckDB dialect; common PostgreSQL / MySQL / T-SQL / SQLite slips are repaired)
    over every table of TASK_DIR and print the rows: the first 50 as an aligned table on a terminal
    (ending with the row count); the whole result as tab-separated values in a pipe, or in --format's
    choice (--limit N for fewer). CSV and TSV stream a result of any size; a result too large for a
    format held in memory (json, table, markdown: 16 MiB of rows) prints what fits and exits 1,
    naming --csv FILE. CSV writes each value as it is (escaped for display only on a terminal). The
    rewrites applied, the row count of a result cut at --limit, and what loading said about the
    tables the query read (the encoding chosen, rows skipped, columns left as text: `note:` lines) go
    to stderr; --format json holds the notes in its object instead. With --csv the query runs once:
    the rows shown are the first of those written; a result of numbers, text, dates and booleans is
    written by DuckDB's own CSV writer. Tables in documents (Markdown / PDF tables) are queryable
    under the names `datasolver tables` lists.

    A table not in the table cache yet is read straight from its file where DuckDB can (a UTF-8
    CSV, Parquet), and loaded into the cache after the rows are printed (with --format json, before:
    the object's notes are the load's): the next query on the same unchanged files reads no file
    again. A file of 16 MiB or more goes into the cache in a detached background process, so the
    command exits once the rows are out (a note on stderr names it). Ctrl-C stops a load or query at
    once (exit 130).

    QUERY is the SQL text; `-` reads it from stdin, and --file FILE from a file. A query that
    starts with a `--` comment works as is; after the `--` separator every word is an
    argument, never an option, whatever it starts with:

    \b
      datasolver sql TASK "SELECT count(*) FROM sales"
      datasolver sql TASK --csv out.csv -- "-- top regions
      SELECT region FROM sales"
      cat query.sql | datasolver sql TASK -
      datasolver sql TASK --format json "SELECT * FROM sales" | jq '.rows[0]'
    """
    query = read_query(query, query_file)
    terminal = sys.stdout.isatty()
    fmt = output_format or ("table" if terminal else "tsv")
    whole_csv_out = csv_path is not None and str(csv_path) == STDIN
    if whole_csv_out and output_format not in (None, "csv"):
        raise click.UsageError("--csv - prints the full result as CSV; leave out --format, or give --csv a file")
    if limit is None and (csv_path is not None or (terminal and output_format is None)):
        limit = TERMINAL_ROWS
    streamed = whole_csv_out or (limit is None and fmt in ("csv", "tsv"))  # the whole result, written as it comes
    with document_tables(task_dir, cache=doc_cache) as docs, \
            Catalog.open(task_dir, timeout_s=timeout or None, extra_derived=docs.extra_derived, encoding=encoding,
                         header_row=header_row, table_cache=TableCache.from_setting(table_cache),
                         scan_before_load=fmt != "json") as catalog:
        relation = catalog.sql(query)

        def run() -> QueryResult:
            if streamed:
                return relation.write(sys.stdout, "csv" if whole_csv_out else fmt, visible_controls=terminal)
            if csv_path is not None:
                return relation.to_csv(csv_path, limit)
            return relation.fetch(WHOLE if limit is None else limit)

        result = run_catalog_work(catalog, run)
        unread = catalog.unread_summary()
        folder_notes = [unread] if unread else []
        result.notes = result.notes + folder_notes  # --format json holds them (its tables were loaded first)
        if not streamed:
            # Cells escaped where the format shows them, separators kept; `color` keeps an escape
            # sequence that a CSV cell holds in a pipe (click.echo would strip it off a terminal).
            click.echo(format_result(result, fmt, terminal=terminal), nl=False, color=True)
            if fmt != "table" and result.truncated:  # the table ends with its count line
                click.echo(result.count_line(), err=True)
        if result.rewrites:
            click.echo(printable(rewrites_note(result.rewrites)), err=True)
        if csv_path is not None and not whole_csv_out:
            click.echo(printable(f"wrote {result.total_rows} rows to {csv_path}"), err=True)
        if fmt != "json":
            sys.stdout.flush()
            # the next query reads the cache, not the files; a big file is cached after exit
            left = run_catalog_work(catalog, lambda: catalog.persist(leave_from_bytes=BACKGROUND_BYTES))
            if left and catalog.table_cache is not None:
                job = FillJob(str(task_dir.resolve()), str(catalog.table_cache.root), [name for name, _, _ in left],
                              [str(Path(d).resolve()) for d in docs.extra_derived], encoding, header_row)
                for line in fill_later(job, left):
                    click.echo(printable(line), err=True)
            # a table read straight from its file has its notes once it is loaded
            for line in render_notes(relation.load_notes() + folder_notes):
                click.echo(printable(line), err=True)
        if result.byte_budget is not None and result.truncated and csv_path is None:
            raise ResultTooLarge(
                f"only the first {len(result.rows)} of {result.total_rows} rows were printed: --format {fmt} holds "
                f"at most {result.byte_budget >> 20} MiB of rows in memory. Write the whole result with "
                "--csv FILE (or --format csv / tsv, which stream it), or select fewer or narrower columns")


COMMANDS = [tables_command, sql_command]
