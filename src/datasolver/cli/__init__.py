"""Command-line interface: a thin shell over the library (parse, one library call, print)."""

from __future__ import annotations

import click

from datasolver import __version__
from datasolver.errors import DatasolverError
from datasolver.signals import EXIT_CODE, Terminated, terminate_unwinds

USER_ERRORS = (DatasolverError, OSError)
"""What a person can cause and fix (bad input, a missing model, an unwritable folder): printed as
`Error: <message>` with exit code 1. Anything else is a bug and keeps its traceback."""


class _Group(click.Group):
    """The command group; the one place where a library error becomes `Error: …` and exit 1.

    SIGTERM unwinds every command like Ctrl-C (temp folders are removed on the way out) and
    exits with status 143.
    """

    def invoke(self, ctx: click.Context) -> object:
        try:
            with terminate_unwinds():
                return super().invoke(ctx)
        except Terminated as exc:
            raise click.exceptions.Exit(EXIT_CODE) from exc
        except BrokenPipeError:
            raise  # click's own handling: a closed pipe on stdout is not an error of ours
        except USER_ERRORS as exc:
            raise click.ClickException(str(exc)) from exc


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="datasolver")
def cli() -> None:
    """datasolver: analysis tasks in, one prediction.csv per task out.

    Every table in a task's context (CSV, JSON, SQLite, documents) is queryable
    under one canonical DuckDB name. Run `datasolver COMMAND --help` for details.
    """


def _register() -> None:
    # Each command module owns its commands; this list is the only wiring.
    from datasolver.cli import ask_cmds, data_cmds, docs_cmds, eval_cmd, replay_cmds, run_cmds, solver_cmds, video_cmds

    for module in (data_cmds, eval_cmd, solver_cmds, docs_cmds, run_cmds, replay_cmds, ask_cmds, video_cmds):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main() -> None:
    cli()
