"""`datasolver prepare` runs the deterministic document stage: Markdown tables become queryable."""

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data import Catalog
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

REPORT = """# 年度报告

下表列出各公司收入。

| 公司 | 收入 |
|---|---|
| 甲 | 10 |
| 乙 | 20 |
"""


def test_prepare_writes_document_tables_and_lists_them_in_the_scaffold(tmp_path):
    task = write_task(tmp_path / "in", files={"doc/年度报告.md": REPORT, "csv/a.csv": "x\n1\n"})
    result = CliRunner().invoke(cli, ["prepare", str(task), str(tmp_path / "scratch"), "--no-llm"])
    assert result.exit_code == 0, result.output
    root = tmp_path / "scratch" / "task_1"
    assert result.output.splitlines()[-1] == str(root)
    assert "年度报告" in (root / "workdir" / "solver.py").read_text(encoding="utf-8")
    with Catalog.open(root) as cat:
        info = cat.table("年度报告")
        assert info.kind == "derived" and info.origin.startswith("doc/年度报告.md lines")
        assert cat.query("SELECT sum(收入) FROM 年度报告").rows == [(30,)]
