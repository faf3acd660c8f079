"""Command-line interface: a thin shell over the library (parse, one library call, print)."""

from __future__ import annotations

import importlib
import os
import sys

import click

from datasolver import __version__
from datasolver.errors import DatasolverError
from datasolver.signals import EXIT_CODE, Terminated, terminate_unwinds
from datasolver.terminal import printable

# Each command module owns its commands (its COMMANDS list); this map is the only wiring. A
# module is imported when one of its commands runs (or help lists them all), so `datasolver mcp`
# or `datasolver tables` starts without the pipeline and the LLM SDK (~0.5 CPU-s less).
COMMAND_MODULES = {
    "tables": "data_cmds", "sql": "data_cmds",
    "eval": "eval_cmd", "eval-compare": "eval_cmd",
    "prepare": "solver_cmds", "tool": "solver_cmds", "solve": "solver_cmds", "doctor": "solver_cmds",
    "docs": "docs_cmds",
    "run": "run_cmds", "demo": "run_cmds",
    "replay": "replay_cmds", "report": "replay_cmds",
    "ask": "ask_cmds", "ask-golden": "ask_cmds", "mcp": "mcp_cmd",
    "video": "video_cmds",
}

INTERRUPTED_EXIT_CODE = 130  # what a shell reports for a process ended by Ctrl-C (SIGINT)
USER_ERRORS = (DatasolverError, OSError)
"""What a person can cause and fix (bad input, a missing model, an unwritable folder): printed as
`Error: <message>` with exit code 1. Anything else is a bug and keeps its traceback."""


class _Group(click.Group):
    """The command group; the one place where a library error becomes `Error: …` and exit 1.

    SIGTERM unwinds every command like Ctrl-C (temp folders are removed on the way out) and
    exits with status 143; Ctrl-C exits with 130. Both say `interrupted` on stderr.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMAND_MODULES:
            module = importlib.import_module(f"datasolver.cli.{COMMAND_MODULES[name]}")
            for command in module.COMMANDS:
                self.commands.setdefault(command.name, command)
        return self.commands.get(name)

    def invoke(self, ctx: click.Context) -> object:
        try:
            with terminate_unwinds():
                return super().invoke(ctx)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM as `Terminated`: the cleanup has run
            code = EXIT_CODE if isinstance(exc, Terminated) else INTERRUPTED_EXIT_CODE
            click.echo("interrupted", err=True)
            if getattr(exc, "exit_without_finalizing", False):  # see signals.run_stoppable
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
                os._exit(code)
            raise click.exceptions.Exit(code) from exc
        except BrokenPipeError:
            raise  # click's own handling: a closed pipe on stdout is not an error of ours
        except USER_ERRORS as exc:
            raise click.ClickException(printable(str(exc), keep_newlines=True)) from exc


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="datasolver")
def cli() -> None:
    """datasolver: analysis tasks in, one prediction.csv per task out.

    Every table in a task's context (CSV, JSON, SQLite, documents) is queryable
    under one canonical DuckDB name. Run `datasolver COMMAND --help` for details.
    """


def main() -> None:
    cli()
