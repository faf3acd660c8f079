"""`datasolver mcp`: the engine's tools over MCP for any MCP client (no model needed)."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from datasolver.cli.input_options import encoding_option, follow_outside_links, table_cache_option
from datasolver.cmdline import hide_in_cmdline
from datasolver.mcp_http import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_S, TOKEN_ENV

_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


def _hide_token(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--token: overwrite it in this process's command line at once, and say so."""
    if value and ctx.get_parameter_source(param.name or "token") == ParameterSource.COMMANDLINE:
        hidden = hide_in_cmdline(value)
        click.echo(f"warning: --token on the command line can be read by other processes "
                   f"({'now masked in this process' if hidden else 'it could not be masked here'}); "
                   f"use {TOKEN_ENV} or --token-file instead.", err=True)
    return value


@click.command("mcp")
@click.argument("path", metavar="DATA_OR_TASK_DIR", type=_DIR)
@follow_outside_links
@click.option("--http", "http_port", type=click.IntRange(1, 65535), metavar="PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to bind with --http. Only 127.0.0.1 and ::1 (localhost) count as loopback; "
                   "anything else (127.0.0.2 too) needs --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow a non-loopback --host. Every request must then carry `Authorization: Bearer TOKEN` "
                   "and a Host (and Origin, from browsers) naming this machine or an --allowed-host.")
@click.option("--token", envvar=TOKEN_ENV, metavar="TOKEN", callback=_hide_token,
              help=f"Bearer token for --http [env {TOKEN_ENV}]; visible to other processes on the command line, "
                   "so prefer the environment or --token-file. With --allow-remote and no token, one is "
                   "generated and printed on stderr. On loopback it is checked only when given.")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Read the bearer token from this file.")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="Another Host name (or address) clients may use to reach the server (repeat).")
@click.option("--max-sessions", type=click.IntRange(min=1), default=DEFAULT_MAX_SESSIONS, show_default=True,
              help="With --http: MCP sessions open at once; one more is answered 503 until one ends.")
@click.option("--session-idle-timeout", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_SESSION_IDLE_S,
              show_default=True, metavar="SECONDS",
              help="With --http: close a session (and free its results) after this long without a request.")
@click.option("--query-timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              metavar="SECONDS", help="Interrupt any one query after this long; the client gets a timeout error.")
@click.option("--allow-write", is_flag=True,
              help="Task folders: also offer edit_solver and run_solver (they change solver.py in a scratch copy).")
@click.option("--symmetric", multiple=True, metavar="TYPE", help="A relation type that holds both ways (repeat).")
@encoding_option
@table_cache_option
def mcp_command(path: Path, http_port: int | None, host: str, allow_remote: bool, token: str | None,
                token_file: Path | None, allowed_hosts: tuple[str, ...], max_sessions: int,
                session_idle_timeout: float, query_timeout: float, allow_write: bool,
                symmetric: tuple[str, ...], encoding: str | None, table_cache: str | None) -> None:
    """Serve the engine's tools over MCP (stdio, or streamable HTTP with --http): list_tables,
    describe_table, query (results kept as @N handles, one set per session), filter, group, sort,
    join, related, render. For a task folder (task.json + context/) also the solver tools on a
    scratch copy: explore_data and read_solver, plus edit_solver and run_solver with --allow-write.
    The tables load once, in the background, as the server starts (into the table cache, so the
    next server on the same files reads none of them); a call waits for that load before its
    --query-timeout starts. Read-only: the input folder is never written. No model is needed
    here. With --http, stderr says `listening on http://HOST:PORT/mcp` once it accepts connections;
    a port in use is an error (exit 1). Ctrl-C or SIGTERM stops the server and removes its
    temporary folders.
    """
    from datasolver.llm import read_key_file
    from datasolver.mcp_http import plan_exposure
    from datasolver.mcp_server import build_server

    if token_file is not None:
        if token:
            raise click.UsageError(f"give the token once: --token (or ${TOKEN_ENV}) or --token-file")
        token = read_key_file(token_file, what="token")
    exposure = None
    if http_port is not None:
        # Checked before any work: a refused remote bind opens nothing.
        exposure, generated = plan_exposure(host, http_port, allow_remote=allow_remote, token=token,
                                            allowed_hosts=allowed_hosts, max_sessions=max_sessions,
                                            session_idle_s=session_idle_timeout)
        if generated:
            click.echo(f"bearer token (send `Authorization: Bearer <token>`): {exposure.token}", err=True)
    from datasolver.data import TableCache

    with build_server(path, allow_write=allow_write, symmetric=symmetric, query_timeout_s=query_timeout,
                      encoding=encoding, table_cache=TableCache.from_setting(table_cache)) as server:
        server.run(http_port, host, exposure,
                   on_listening=lambda url: click.echo(f"datasolver mcp: listening on {url}", err=True))


COMMANDS = [mcp_command]
