"""The CLI reference (docs/cli.md), made from the commands' own `--help`, and the settings tables
of the docs, made from the settings dataclasses.

Hand-kept flag tables drifted from the code (docs/pipeline.md's `run` table lacked nine flags), so
the reference is generated: `python -m datasolver.cli.reference docs/cli.md` rewrites it. Likewise
each settings table in docs/ sits between `<!-- settings: ClassName -->` and `<!-- end settings -->`
and is rewritten by `python -m datasolver.cli.reference --settings docs/*.md`. A test fails when a
file and the code differ.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from datasolver import safe_write
from datasolver.agent import Limits
from datasolver.ask.config import AskConfig, AskLimits
from datasolver.data.input_limits import InputLimits
from datasolver.documents.records import PrepareOptions
from datasolver.documents.structurize.limits import StructurizeLimits
from datasolver.errors import DatasolverError
from datasolver.llm import LLMSettings
from datasolver.mcp_http import Exposure
from datasolver.pipeline.config import RunConfig
from datasolver.pipeline.votes import VotePolicy
from datasolver.sandbox.policy import SandboxLimits
from datasolver.settings import settings_table
from datasolver.video.analyze import VideoOptions
from datasolver.video.keyframes import DetectorSettings

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


# Every settings dataclass; each has its generated table in docs/ (a test checks both).
SETTINGS_CLASSES: dict[str, type] = {cls.__name__: cls for cls in (
    Limits, AskLimits, AskConfig, LLMSettings, RunConfig, VotePolicy, InputLimits, StructurizeLimits,
    PrepareOptions, SandboxLimits, VideoOptions, DetectorSettings, Exposure)}
SETTINGS_BLOCK = re.compile(r"(<!-- settings: (\w+) -->\n)(.*?)(<!-- end settings -->)", re.DOTALL)
SETTINGS_COMMAND = "python -m datasolver.cli.reference --settings docs/*.md"


def settings_blocks(text: str) -> list[tuple[str, str]]:
    """(class name, the table written) of each settings block of a Markdown text."""
    return [(m.group(2), m.group(3)) for m in SETTINGS_BLOCK.finditer(text)]


def refresh_settings(text: str) -> str:
    """The text with the table of every settings block made again from its class."""
    def table(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in SETTINGS_CLASSES:
            raise DatasolverError(f"unknown settings class {name!r} (known: {', '.join(SETTINGS_CLASSES)})")
        return match.group(1) + settings_table(SETTINGS_CLASSES[name]) + match.group(4)

    return SETTINGS_BLOCK.sub(table, text)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--settings"] and len(argv) > 1:
        for name in argv[1:]:
            path = Path(name)
            text = path.read_text(encoding="utf-8")
            if refresh_settings(text) != text:
                safe_write.write_file(path, refresh_settings(text))
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python -m datasolver.cli.reference OUTPUT.md\n"
              "       python -m datasolver.cli.reference --settings DOC.md ...", file=sys.stderr)
        return 2
    safe_write.write_file(Path(argv[0]), render_reference())  # never through a link at that path
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
