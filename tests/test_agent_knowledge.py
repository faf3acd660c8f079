"""knowledge.md in the first prompt: column tables lose what the table descriptions already say
(types, example values), nothing else; `\\knowledge` still shows the file verbatim."""

from __future__ import annotations

from pathlib import Path

from datasolver.agent.knowledge import compact_knowledge
from datasolver.solver import SolverToolbox, prepare_task
from datasolver.solver.testing import make_tiny_task

FALCON = """# 数据说明

本任务的数据来自公开数据集。

## 数据集：学校成绩

### 表 `Marks`（240 行）

外键：StudentID → Students.studentid

| 列名 | 类型 | 释义 | 示例值 |
|---|---|---|---|
| MarkID | 整数 | 成绩记录ID | 1；2；3 |
| MarkObtained | 整数 | 所得分数 | 85；78；92 |



### 表 `Loans`（614 行）

| 列名 | 类型 | 释义 | 示例值 |
|---|---|---|---|
| Loan_ID | 文本 | 贷款编号 | LP001002；LP001003 |
"""

RETQA = """## 表的类型与字段

### 土地成交信息表

表名形如 `<城市><区县>土地成交信息表`。

| 字段 | 含义 | 单位/格式 |
|---|---|---|
| 地块名称 | 出让地块名称或编号 | 文本 |
| 成交总价 | 土地成交总价 | 元 |
| 建筑密度(%) | 建筑密度 | 百分数的数值，如 30.0 表示 30% |

## 本任务中的表

| 表名 | 类型 | 范围 | 行数 |
|---|---|---|---|
| 武汉市洪山区土地成交信息表 | 土地成交信息表 | 武汉市洪山区 | 27 |
"""


def test_a_described_tables_column_list_keeps_meanings_and_keys_only() -> None:
    text = compact_knowledge(FALCON, described=["marks"])
    assert "### 表 `Marks`（240 行）\n\n外键：StudentID → Students.studentid\n\n列名: 释义\n" \
           "- MarkID: 成绩记录ID\n- MarkObtained: 所得分数\n" in text
    assert "整数" not in text.split("### 表 `Loans`")[0] and "85；78；92" not in text
    assert "\n\n\n" not in text


def test_a_table_not_described_in_full_keeps_its_column_list_verbatim() -> None:
    text = compact_knowledge(FALCON, described=["marks"])
    assert "| Loan_ID | 文本 | 贷款编号 | LP001002；LP001003 |" in text


def test_units_stay_and_bare_type_words_go_for_a_described_family() -> None:
    text = compact_knowledge(RETQA, described=["武汉市洪山区土地成交信息表"])
    assert "字段: 含义 (单位/格式)\n- 地块名称: 出让地块名称或编号\n- 成交总价: 土地成交总价 (元)\n" \
           "- 建筑密度(%): 建筑密度 (百分数的数值，如 30.0 表示 30%)\n" in text
    # a listing of tables all described in full: one line (the table section says it all)
    assert "## 本任务中的表\n\n(a listing of 1 tables: name, kind, scope, rows; every one is described under " \
           "Tables below)\n" in text and "| 27 |" not in text


def test_a_listing_naming_a_table_not_described_stays() -> None:
    text = compact_knowledge(RETQA, described=["苏州市吴中区土地成交信息表"])
    assert "| 武汉市洪山区土地成交信息表 | 土地成交信息表 | 武汉市洪山区 | 27 |" in text


def test_nothing_is_dropped_when_no_table_is_described() -> None:
    assert compact_knowledge(FALCON, described=[]) == FALCON.replace("\n\n\n\n", "\n\n")


def test_knowledge_command_shows_the_file_verbatim(tmp_path: Path) -> None:
    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    with SolverToolbox(root) as box:
        result = box.call("explore_data", {"query": "\\knowledge"})
    assert result.ok and result.text == "amount is in euros.\n"
