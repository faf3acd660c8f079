"""`datasolver run --executor`: a Ray address without the Ray executor is refused before any work."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from datasolver.cli import cli


def test_ray_address_needs_the_ray_executor(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, [
        "run", str(tmp_path / "input"), str(tmp_path / "out"), "--api-url", "http://127.0.0.1:9/v1",
        "--model", "m", "--ray-address", "auto",
    ])
    assert result.exit_code == 2
    assert "--ray-address needs --executor ray" in result.output
    assert not (tmp_path / "out").exists()
