"""The CLI reference (docs/cli.md), made from the commands' own `--help`.

Hand-kept flag tables drifted from the code (docs/pipeline.md's `run` table lacked nine flags), so
the reference is generated: `python -m datasolver.cli.reference docs/cli.md` rewrites it, and a
test fails when the file and the help texts differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from datasolver import safe_write

WIDTH = 100  # fixed, so the text does not depend on the terminal that made it

HEADER = """\
# Command reference

Generated from `datasolver COMMAND --help`; do not edit by hand. After changing a command, run
`python -m datasolver.cli.reference docs/cli.md` (`tests/test_docs_generated.py` fails until the
file matches the help texts).
"""


def _help(command: click.Command, name: str, parent: click.Context | None) -> str:
    # The group's context_settings (`-h` beside `--help`) as `datasolver …` itself applies them;
    # click caches a command's help option from the first context that asks for it.
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(command, info_name=name, parent=parent, **settings)
    return command.get_help(ctx).rstrip()


def render_reference() -> str:
    """Markdown: the group's help, then each command's help in name order."""
    from datasolver.cli import cli

    root = click.Context(cli, info_name="datasolver", terminal_width=WIDTH, max_content_width=WIDTH,
                         **cli.context_settings)
    parts = [HEADER, "## datasolver\n", "```text", _help(cli, "datasolver", None), "```\n"]
    for name in cli.list_commands(root):
        command = cli.get_command(root, name)
        if command is None:
            continue
        parts += [f"## datasolver {name}\n", "```text", _help(command, name, root), "```\n"]
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m datasolver.cli.reference OUTPUT.md", file=sys.stderr)
        return 2
    safe_write.write_file(Path(argv[0]), render_reference())  # never through a link at that path
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
