"""knowledge.md in the first prompt: column tables lose what the table descriptions already say
(types, example values), nothing else; `\\knowledge` still shows the file verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.agent.knowledge import JOINS_HEADING, compact_knowledge, merge_knowledge
from datasolver.agent.tables import TableDigest, TableEntry
from datasolver.data import ScratchLayout, TableInfo, TableProfile
from datasolver.data.profile import ColumnProfile
from datasolver.solver import SolverToolbox
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import make_tiny_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

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
    assert "## 本任务中的表\n\n(a listing of the 1 tables, all under Tables)\n" in text
    assert "| 27 |" not in text


def test_a_listing_naming_a_table_not_described_stays() -> None:
    text = compact_knowledge(RETQA, described=["苏州市吴中区土地成交信息表"])
    assert "| 武汉市洪山区土地成交信息表 | 土地成交信息表 | 武汉市洪山区 | 27 |" in text


def test_nothing_is_dropped_when_no_table_is_described() -> None:
    assert compact_knowledge(FALCON, described=[]) == FALCON.replace("\n\n\n\n", "\n\n")


def test_knowledge_command_shows_the_file_verbatim(tmp_path: Path) -> None:
    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(root)) as box:
        result = box.call("explore_data", {"query": "\\knowledge"})
    assert result.ok and result.text == "amount is in euros.\n"


# --- merge_knowledge: meanings said once, on the column lines of the table section -------------

def column(name: str, ctype: str = "BIGINT", distinct: int = 2, lo: str | None = "1", hi: str | None = "2",
           example: str | None = None) -> ColumnProfile:
    return ColumnProfile(name, ctype, 0, distinct, example or lo, lo, hi)


def entry(name: str, columns: list[ColumnProfile], aliases: tuple[str, ...] = (), source: str = "csv/x.csv",
          profiled: bool = True) -> TableEntry:
    info = TableInfo(name, "table", source, name, 2, [c.name for c in columns], list(aliases))
    return TableEntry(info, TableProfile(name, 2, source, columns, list(aliases)) if profiled else None)


def falcon_digest(**marks) -> TableDigest:
    marks_columns = marks.get("columns", [column("MarkID"), column("MarkObtained")])
    return TableDigest((entry("marks", marks_columns, ("df_marks",)),
                        entry("loans", [column("Loan_ID", "VARCHAR", lo=None, hi=None, example="LP001002")])))


def test_a_described_tables_meanings_move_onto_its_column_lines() -> None:
    digest = falcon_digest()
    merged = merge_knowledge(FALCON, digest)
    assert merged.notes == {"marks": {"MarkID": "成绩记录ID", "MarkObtained": "所得分数"}, "loans": {"Loan_ID": "贷款编号"}}
    # the list is gone; heading, key line and prose stay where they were
    assert "MarkID" not in merged.text and "列名" not in merged.text and "Loan_ID" not in merged.text
    assert "本任务的数据来自公开数据集。" in merged.text
    assert "### 表 `Marks`（240 行）\n\n外键：StudentID → Students.studentid\n\n### 表 `Loans`" in merged.text
    tables = digest.render(notes=merged.notes)
    assert "  MarkID BIGINT, unique, 1 .. 2 — 成绩记录ID\n  MarkObtained BIGINT, unique, 1 .. 2 — 所得分数" in tables
    assert "  Loan_ID VARCHAR, unique, e.g. LP001002 — 贷款编号" in tables


def test_a_list_naming_a_column_the_table_lacks_stays_in_the_knowledge() -> None:
    digest = falcon_digest(columns=[column("MarkID")])  # no MarkObtained in the data
    merged = merge_knowledge(FALCON, digest)
    assert "列名: 释义\n- MarkID: 成绩记录ID\n- MarkObtained: 所得分数\n" in merged.text  # compacted, not merged
    assert "marks" not in merged.notes and merged.notes == {"loans": {"Loan_ID": "贷款编号"}}
    assert "—" not in digest.render(notes=merged.notes).split("loans:")[0]


def test_a_folded_or_unprofiled_tables_list_stays_verbatim() -> None:
    merged = merge_knowledge(FALCON, falcon_digest(), folded=["marks"])
    assert "| MarkID | 整数 | 成绩记录ID | 1；2；3 |" in merged.text and "marks" not in merged.notes
    unprofiled = TableDigest((entry("marks", [column("MarkID"), column("MarkObtained")], profiled=False),))
    assert "| MarkID | 整数 | 成绩记录ID | 1；2；3 |" in merge_knowledge(FALCON, unprofiled).text


FAMILY = """## 表的类型与字段

### 全国企业财务表

表名形如 `全国企业<YYYY>年财务表`，每行一家企业。

| 字段 | 含义 | 单位/格式 |
|---|---|---|
| 企业名称 | 企业全称 | 文本 |
| 营业总收入 | 年度营业总收入 | 亿元 |
| 时间（月份） | 统计月份 | 文本，如“2021年09月” |

说明：金额为数值列。
"""


def finance(name: str, aliases: tuple[str, ...] = (), month: str = "时间(月份)") -> TableEntry:
    return entry(name, [column("企业名称", "VARCHAR", lo=None, hi=None, example="龙光集团有限公司"),
                        column("营业总收入", "DOUBLE", lo="-2.0", hi="6767551.51"),
                        column(month, "VARCHAR", lo=None, hi=None, example="2021年09月")], aliases)


def test_a_family_list_lands_once_on_its_schema_groups_lines() -> None:
    # the name pattern of the section matches 全国企业2019年财务表, and 财务表(全国企业2020年) read as
    # 全国企业2020年财务表; `时间（月份）` matches the data's `时间(月份)` after normalization
    digest = TableDigest((finance("全国企业2019年财务表"),
                          finance("财务表_全国企业2020年_", ("财务表(全国企业2020年)",))))
    merged = merge_knowledge(FAMILY, digest)
    assert "字段:" not in merged.text and "年度营业总收入" not in merged.text
    assert "表名形如 `全国企业<YYYY>年财务表`，每行一家企业。\n\n说明：金额为数值列。\n" in merged.text
    tables = digest.render(notes=merged.notes)
    assert "These 2 tables share one schema" in tables
    assert "  营业总收入 DOUBLE, ≤2 distinct, -2.0 .. 6767552 — 年度营业总收入 (亿元)\n" in tables
    assert "  时间(月份) VARCHAR, ≤2 distinct, e.g. 2021年09月 — 统计月份 (文本，如“2021年09月”)\n" in tables
    assert "  企业名称 VARCHAR, ≤2 distinct, e.g. 龙光集团有限公司 — 企业全称\n" in tables  # 文本 alone is a type
    assert tables.count("年度营业总收入") == 1


def test_a_family_list_stays_when_its_group_holds_a_table_it_is_not_about() -> None:
    # 某公司财务 has the same schema (one group line) but is not a 全国企业…年财务表: the meaning
    # cannot stand on the shared line, so the list stays in the knowledge
    digest = TableDigest((finance("全国企业2019年财务表"), finance("某公司财务")))
    merged = merge_knowledge(FAMILY, digest)
    assert merged.notes == {}
    assert "- 营业总收入: 年度营业总收入 (亿元)" in merged.text


def test_a_name_that_differs_beyond_normalization_keeps_the_list() -> None:
    digest = TableDigest((finance("全国企业2019年财务表", month="时间月份"),))
    merged = merge_knowledge(FAMILY, digest)
    assert merged.notes == {} and "- 时间（月份）: 统计月份" in merged.text


SPLIT_CELL = """### 表 `customers`（2 行）

| 列名 | 类型 | 释义 | 示例值 |
|---|---|---|---|
| customer_id | 整数 | 客户ID | 9747；2207 |
| address | 文本 | 地址 | 23, Nayar Path；51/302, Buch Chowk
Srinagar...；941
Anne Street ... |
| area | 文本 | 区域 | Udupi；Aligarh |

外键：无
"""


def test_a_cell_broken_over_lines_stays_in_its_row() -> None:
    # an example value with line breaks inside a table whose rows end with `|`: the lines belong to
    # the row (the whole list merges; no fragment of it is left behind)
    columns = [column("customer_id"), column("address", "VARCHAR", lo=None, hi=None, example="23, Nayar Path"),
               column("area", "VARCHAR", lo=None, hi=None, example="Udupi")]
    merged = merge_knowledge(SPLIT_CELL, TableDigest((entry("customers", columns),)))
    assert merged.notes == {"customers": {"customer_id": "客户ID", "address": "地址", "area": "区域"}}
    assert merged.text == "### 表 `customers`（2 行）\n\n外键：无\n"
    # a table the prompt does not describe keeps every line as written
    assert compact_knowledge(SPLIT_CELL, described=[]) == SPLIT_CELL


def test_a_list_naming_one_column_twice_stays() -> None:
    # two rows for the same column (one as written, one full-width) cannot share one line's note
    twice = FAMILY.replace("| 时间（月份） | 统计月份 |", "| 时间(月份) | 统计年月 | 文本 |\n| 时间（月份） | 统计月份 |")
    merged = merge_knowledge(twice, TableDigest((finance("全国企业2019年财务表"),)))
    assert merged.notes == {} and "- 时间(月份): 统计年月\n- 时间（月份）: 统计月份" in merged.text


# --- the forms people write: English sections with key lines, Chinese headers, BIRD CSV --------

ENGLISH = """# Database: academic

Authors and their organizations.

## Table `author`

2 rows.

Primary key (inferred): `aid`.
Join key: `author.oid` references `organization.oid`.

| column | type | description | values |
|---|---|---|---|
| aid | integer | Unique identifier for each author | e.g. 1; 2 |
| name | text | Full name as printed on papers | e.g. Ann; Bo |
| active | text | Not retired | one of: Y, N |
| level | integer | Seniority | one of: 1 = junior, 2 = senior |
| oid | integer | The organization the author works for | e.g. 7; 8 |

## Table `organization`

2 rows.

| Column Name | Data Type | Meaning | Unit |
|---|---|---|---|
| oid | integer | Organization id | |
| budget | float | Yearly budget | million USD |

## Evidence

Match names case-insensitively with ILIKE.
"""


def academic_digest() -> TableDigest:
    return TableDigest((
        entry("author", [column("aid"), column("name", "VARCHAR", lo=None, hi=None, example="Ann"),
                         column("active", "VARCHAR", lo=None, hi=None, example="Y"), column("level"),
                         column("oid")]),
        entry("organization", [column("oid"), column("budget", "DOUBLE", lo="1.5", hi="9.0")])))


def test_english_sections_merge_onto_column_lines_and_go() -> None:
    digest = academic_digest()
    merged = merge_knowledge(ENGLISH, digest)
    assert merged.notes == {
        # "Unique identifier for each author" only spells out author.aid; the inferred key is what
        # "unique" without NULLs says; a value list goes, a value meaning and a negation stay
        "author": {"name": "Full name as printed on papers", "active": "Not retired",
                   "level": "Seniority (one of: 1 = junior, 2 = senior)",
                   "oid": "The organization the author works for; → organization.oid"},
        "organization": {"budget": "Yearly budget (million USD)"}}  # "Organization id": organization.oid
    # each table section said everything the table section of the prompt says: gone, heading and all
    assert merged.text == ("# Database: academic\n\nAuthors and their organizations.\n\n## Evidence\n\n"
                           "Match names case-insensitively with ILIKE.\n")
    tables = digest.render(notes=merged.notes)
    assert "  oid BIGINT, unique, 1 .. 2 — The organization the author works for; → organization.oid" in tables


def test_a_section_stating_other_rows_than_the_data_keeps_its_heading_and_count() -> None:
    merged = merge_knowledge(ENGLISH.replace("## Table `author`\n\n2 rows.", "## Table `author`\n\n5 rows."),
                             academic_digest())
    assert "## Table `author`\n\n5 rows.\n\n## Evidence" in merged.text and "author" in merged.notes


def test_a_key_line_naming_a_column_the_data_lacks_stays_verbatim() -> None:
    text = ENGLISH.replace("`author.oid` references `organization.oid`", "`author.org` references `organization.oid`")
    merged = merge_knowledge(text, academic_digest())
    assert "## Table `author`\n\n2 rows.\n\nJoin key: `author.org` references `organization.oid`.\n" in merged.text
    assert merged.notes["author"]["oid"] == "The organization the author works for"


CHINESE = """# 数据说明

### 表 `orders`（2 行）

主键：order_id；关联键：customer_id = customers.id

| 字段名 | 数据类型 | 说明 | 取值 | 单位 |
|---|---|---|---|---|
| order_id | 整数 | 订单编号 | 如 1、2 | |
| status | 整数 | 订单状态 | 1 表示已发货，0 表示未发货 | |
| amount | 小数 | 订单金额 | 如 3.5 | 元 |

金额均为含税价。
"""


def test_chinese_headers_and_key_lines_merge_the_same_way() -> None:
    digest = TableDigest((entry("orders", [column("order_id"), column("status"), column("amount", "DOUBLE"),
                                           column("customer_id")]),
                          entry("customers", [column("id")])))
    merged = merge_knowledge(CHINESE, digest)
    assert merged.notes == {"orders": {"order_id": "订单编号; 主键", "status": "订单状态 (1 表示已发货，0 表示未发货)",
                                       "amount": "订单金额 (元)", "customer_id": "joins customers.id"}}
    # the rule under the list is no column fact: it stays, and so does the heading above it
    assert merged.text == "# 数据说明\n\n### 表 `orders`（2 行）\n\n金额均为含税价。\n"


BIRD = """# Database: schools

## frpm

```csv
original_column_name,column_name,column_description,data_format,value_description
CDSCode,CDSCode,,text,
Charter,Charter School,whether it is a charter school,integer,"0: N; 1: Y"
FRPM Count,,"Free or reduced price meals, K-12",real,
```

Evidence: eligible free rate = `Free Meal Count` / `Enrollment`.
"""


def test_bird_csv_descriptions_merge_and_evidence_stays() -> None:
    digest = TableDigest((entry("frpm", [column("CDSCode", "VARCHAR", lo=None, hi=None, example="01100"),
                                         column("Charter"), column("FRPM Count", "DOUBLE")]),))
    merged = merge_knowledge(BIRD, digest)
    assert merged.notes == {"frpm": {"Charter": "Charter School (whether it is a charter school; 0: N; 1: Y)",
                                     "FRPM Count": "Free or reduced price meals, K-12"}}
    assert merged.text == ("# Database: schools\n\n## frpm\n\n"
                           "Evidence: eligible free rate = `Free Meal Count` / `Enrollment`.\n")
    # for a table the prompt does not describe in full, the CSV stays as written
    assert compact_knowledge(BIRD, described=[]) == BIRD


def test_joins_of_three_or_more_columns_are_one_line_each() -> None:
    text = ("## Table `a`\n\nJoin key: `a.sid` can be joined with `b.sid`.\nJoin key: `a.sid` can be joined with "
            "`c.state`.\n\n## Table `b`\n\nJoin key: `b.pid` references `c.pid`.\n")
    digest = TableDigest((entry("a", [column("sid")]), entry("b", [column("sid"), column("pid")]),
                          entry("c", [column("state"), column("pid")])))
    merged = merge_knowledge(text, digest)
    assert merged.joins == (("a.sid", "b.sid", "c.state"),)
    assert merged.notes == {"b": {"pid": "→ c.pid"}} and merged.text.strip() == ""
    assert merged.join_text().splitlines()[-2:] == [JOINS_HEADING, "  a.sid = b.sid = c.state"]


def test_prose_stays_as_written() -> None:
    prose = "# Notes\n\nThe `amount` column is in euros; refunds are negative.\n"
    assert merge_knowledge(prose, academic_digest()).text == prose
