"""Every command explains itself and is listed in the README (sqlite-utils' test_docs habit)."""

import importlib
import subprocess
import sys

import click
from click.testing import CliRunner

from datasolver.cli import COMMAND_MODULES, cli
from tests.helpers.paths import REPO_ROOT


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(cli)
    return {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}


def test_every_command_has_help_and_a_readme_row():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    runner = CliRunner()
    commands = _commands()
    assert len(commands) >= 13
    for name, command in commands.items():
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, name
        assert command.help and len(command.help.strip()) > 40, f"{name} has no real help text"
        assert f"`datasolver {name}" in readme, f"README does not list `datasolver {name}`"


def test_the_command_map_names_every_command_of_every_command_module():
    for module in sorted(set(COMMAND_MODULES.values())):
        defined = {c.name for c in importlib.import_module(f"datasolver.cli.{module}").COMMANDS}
        assert defined == {name for name, home in COMMAND_MODULES.items() if home == module}, module


def test_a_command_loads_only_its_own_module():
    # `datasolver mcp` (started by every MCP client session) needs neither the pipeline nor a model;
    # nor does `datasolver tool` (one solver tool on a prepared task: ~1 CPU-s less to start).
    probe = ("import sys\nfrom datasolver.cli import cli\nfor command in ('mcp', 'tool'):\n    try:\n"
             "        cli([command, '--help'])\n    except SystemExit:\n        pass\nimport datasolver.mcp_server\n"
             "print(sorted(m for m in ('openai', 'datasolver.pipeline', 'datasolver.agent', 'datasolver.cli.run_cmds')"
             " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
