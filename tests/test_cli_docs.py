"""Every command explains itself and is listed in the README (sqlite-utils' test_docs habit)."""

from click.testing import CliRunner

from datasolver.cli import cli
from tests.conftest import REPO_ROOT


def test_every_command_has_help_and_a_readme_row():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    runner = CliRunner()
    assert len(cli.commands) >= 13
    for name, command in cli.commands.items():
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, name
        assert command.help and len(command.help.strip()) > 40, f"{name} has no real help text"
        assert f"`datasolver {name}" in readme, f"README does not list `datasolver {name}`"
