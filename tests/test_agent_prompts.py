"""Prompt assembly: every placeholder filled, knowledge in full, profiles, tree, hints, question."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from datasolver.agent import Limits
from datasolver.agent.assemble import build_messages, build_task_prompt, build_user_prompt
from datasolver.agent.brief import gather_brief, TaskBrief
from datasolver.agent.prompts import render_prompt
from datasolver.agent.tokens import estimate_tokens
from datasolver.agent.assemble import KNOWLEDGE_OMITTED
from datasolver.agent.prompts import placeholders, template_names
from datasolver.errors import PromptError
from datasolver.agent.tables import digest_tables
from datasolver.agent.tree import render_tree
from datasolver.data import Catalog, ScratchLayout
from datasolver.documents import prepare_documents
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import TINY_QUESTION, make_tiny_task

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

LEFTOVER = re.compile(r"\{\{\w+\}\}")
KNOWLEDGE = """# 数据说明

| 字段 | 含义 | 单位 |
|---|---|---|
| amount | 订单金额 | 欧元 |

Example SQL (may be wrong): SELECT sum(amount) FROM orders;
A literal {{not_a_placeholder}} stays as written.
"""


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    task = make_tiny_task(tmp_path / "input")
    (task / "context" / "knowledge.md").write_text(KNOWLEDGE, encoding="utf-8")
    return prepare_task(task, tmp_path / "scratch")


def brief_of(scratch: Path, limits: Limits = Limits()) -> TaskBrief:
    with Catalog.open(scratch, cache_dir=scratch / "tmp") as catalog:
        return gather_brief(ScratchLayout.of(scratch), catalog, limits)


def test_every_solver_prompt_fills_all_placeholders() -> None:
    names = template_names()
    assert {"rules", "knowledge", "evidence", "task", "compaction"} <= set(names)
    for name in names:
        wanted = placeholders(name)
        # Values not shaped like tags: `<knowledge value>` reads as the knowledge tag with an attribute.
        text = render_prompt(name, **{key: f"[{key} value]" for key in wanted})
        assert not LEFTOVER.search(text), name
        assert all(f"[{key} value]" in text for key in wanted)


def test_missing_or_unused_values_are_errors() -> None:
    with pytest.raises(PromptError, match=r"missing values \['question'\]"):
        render_prompt("task", tree="t", tables="t", document_tables="", linking="")
    with pytest.raises(PromptError, match=r"unused values \['extra'\]"):
        render_prompt("evidence", evidence_hints="h", extra="x")
    with pytest.raises(PromptError, match="missing"):
        render_prompt("no_such_prompt")


def test_opening_messages_hold_all_three_layers(scratch: Path) -> None:
    system, user = build_messages(brief_of(scratch), Limits(max_requests_per_attempt=33))
    assert system["role"] == "system" and user["role"] == "user"
    # (a) fixed rules, with the request budget filled in.
    rules = system["content"]
    assert "The answer is prediction.csv, not your message." in rules
    assert "Extremes: decide by the question's wording." in rules
    assert "at most 33 model turns" in rules
    # (b) knowledge.md in full, verbatim (no line prefixes); its braces are not placeholders.
    text = user["content"]
    assert KNOWLEDGE.strip() in text
    assert "{{not_a_placeholder}}" in text
    # (c) tree, profiles, question, the solver.py hint.
    # files that back a table are counted once (the table lines name them); knowledge.md is shown
    assert "# Files\n2 table files (164 B), named under Tables\n" in text
    assert "orders: 4 rows, in csv/\n" in text  # the file is named after the table: only its folder
    assert "  amount DOUBLE, 3 distinct, 3.0 .. 10.5, 1 NULL" in text
    assert "cities: 2 rows, in json/; no NULLs" in text  # NULL counts of 0 said once per table
    assert "  country VARCHAR, = FR" in text  # a 1-distinct column: its value, no range
    assert f"# Question\n{TINY_QUESTION}\n" in text
    assert text.endswith(f"# Question\n{TINY_QUESTION}\n")  # how to finish solver.py: the rules say it
    assert "put your code where the line `result = None` stands" in rules
    assert '`{"sql": "SELECT …"}` makes one SQL query the answer' in rules  # the easy edit, and an example:
    assert "# The steps of a whole task" in rules
    assert text.index("# Task knowledge") < text.index("# Tables") < text.index("# Question")
    assert "Evidence hints" not in text  # only when other stages produced some
    assert not LEFTOVER.search(rules)


def test_the_fixed_text_of_the_first_prompt_is_short() -> None:
    # The rules (system message) already say how to quote names, that the example SQL may be wrong
    # and how solver.py is finished; the first user message only labels its parts and says once
    # how to read a column line.
    brief = TaskBrief(task_id="t", question="q", knowledge="k", tree="t", tables="x")
    assert estimate_tokens(build_user_prompt(brief)) <= 70
    assert estimate_tokens(KNOWLEDGE_OMITTED) <= 20


def test_a_tables_column_meanings_are_said_once_on_its_column_lines(tmp_path: Path) -> None:
    task = make_tiny_task(tmp_path / "input")
    (task / "context" / "knowledge.md").write_text(
        "# 数据说明\n\n### 表 `orders`\n\n主键：order_id\n\n| 字段 | 类型 | 含义 | 单位 |\n|---|---|---|---|\n"
        "| order_id | 整数 | 订单编号 | |\n| city | 文本 | 下单城市 | |\n| amount | 小数 | 订单金额 | 欧元 |\n"
        "\nExample SQL (may be wrong): SELECT sum(amount) FROM orders;\n", encoding="utf-8")
    _, user = build_messages(brief_of(prepare_task(task, tmp_path / "scratch")))
    text = user["content"]
    # the key line is said on its column's line too; the section keeps its example SQL
    assert "### 表 `orders`\n\nExample SQL (may be wrong): SELECT sum(amount) FROM orders;\n" in text
    assert "主键：" not in text and "— 订单编号; 主键\n" in text
    assert "  amount DOUBLE, 3 distinct, 3.0 .. 10.5, 1 NULL — 订单金额 (欧元)\n" in text
    assert "  city VARCHAR, 3 distinct, e.g. Paris — 下单城市\n" in text
    assert text.count("订单金额") == 1 and "| amount |" not in text and "字段" not in text
    assert "`\\knowledge` prints it verbatim" in text


def test_the_tiny_tasks_brief_is_pinned(scratch: Path) -> None:
    """The profile's every part (types, counts, ranges, examples, NULLs) as the prompt shows it: a
    cheaper way of building the brief must not change a byte of it."""
    brief = brief_of(scratch)
    assert brief.tables == (
        "orders: 4 rows, in csv/\n"
        "  order_id BIGINT, unique, 1 .. 4\n"
        "  city VARCHAR, 3 distinct, e.g. Paris\n"
        "  amount DOUBLE, 3 distinct, 3.0 .. 10.5, 1 NULL\n"
        "\n"
        "cities: 2 rows, in json/; no NULLs\n"
        "  city VARCHAR, unique, e.g. Paris\n"
        "  country VARCHAR, = FR")
    assert brief.tree == "2 table files (164 B), named under Tables"
    assert brief.knowledge == KNOWLEDGE
    assert (brief.lint, brief.document_tables, brief.video) == ("", "", "")


def test_evidence_hints_are_included_when_given(scratch: Path) -> None:
    _, user = build_messages(brief_of(scratch), evidence_hints="orders.amount is the order total")
    assert "# Evidence hints" in user["content"]
    assert "orders.amount is the order total" in user["content"]


def test_missing_knowledge_is_said_plainly(tmp_path: Path) -> None:
    task = make_tiny_task(tmp_path / "input")
    (task / "context" / "knowledge.md").unlink()
    _, user = build_messages(brief_of(prepare_task(task, tmp_path / "scratch")))
    assert "(this task has no knowledge.md)" in user["content"]


def test_document_table_hints_reach_the_prompt(tmp_path: Path) -> None:
    task = make_tiny_task(tmp_path / "input")
    (task / "context" / "doc").mkdir()
    (task / "context" / "doc" / "offices.md").write_text(
        "# Offices\n\n| office | staff |\n|---|---|\n| Berlin | 120 |\n| Lyon | 80 |\n", encoding="utf-8"
    )
    scratch = prepare_task(task, tmp_path / "scratch")
    prepare_documents(scratch)
    brief = brief_of(scratch)
    assert brief.document_tables.startswith("Document tables")
    text = build_task_prompt(brief)
    assert brief.document_tables in text
    # the document is listed; the extracted table counts with the others, the manifest is the hints
    assert brief.tree == "context/\n  doc/\n    offices.md  (71 B)\n3 table files (196 B), named under Tables"
    assert "staff BIGINT" in brief.tables  # and profiled like any other table


def test_big_tables_are_listed_without_profiling(scratch: Path) -> None:
    with Catalog.open(scratch, cache_dir=scratch / "tmp") as catalog:
        text = digest_tables(catalog, max_rows=3).render()
        assert not any(t.loaded for t in catalog.tables() if t.name == "orders")  # never loaded
    assert "orders: ~4 rows, in csv/ [large: not profiled, use \\schema]; columns: order_id, city, amount" in text
    assert "cities: 2 rows, in json/; no NULLs\n  city VARCHAR" in text


def test_profiles_past_the_character_budget_become_one_line(scratch: Path) -> None:
    with Catalog.open(scratch, cache_dir=scratch / "tmp") as catalog:
        text = digest_tables(catalog, max_chars=50).render()
    assert "orders: 4 rows, in csv/\n  order_id BIGINT" in text  # profiled within the budget
    # past it: one line, with the rows and columns the JSON file's head shows
    assert "cities: 2 rows, in json/ [not profiled to save time, use \\schema]; columns: city, country" in text


def test_the_profiled_tables_load_together_and_those_past_the_budget_do_not(scratch: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[list[str]] = []
    real_load = Catalog.load

    def load(self, names=None, timeout_s=None):
        loads.append(list(names or []))
        return real_load(self, names, timeout_s)

    monkeypatch.setattr(Catalog, "load", load)
    with Catalog.open(scratch, cache_dir=scratch / "tmp") as catalog:
        digest_tables(catalog)
        assert loads[0] == ["orders", "cities"]  # one loader connection for both
    with Catalog.open(scratch, cache_dir=scratch / "tmp") as catalog:
        digest_tables(catalog, max_chars=50)  # cities is past the budget: listed, never loaded
        assert not any(t.loaded for t in catalog.tables() if t.name == "cities")


def test_unreadable_files_are_reported(tmp_path: Path) -> None:
    task = make_tiny_task(tmp_path / "input")
    (task / "context" / "csv" / "broken.csv").write_bytes(b"")
    scratch = prepare_task(task, tmp_path / "scratch")
    assert "Not readable:\n  - csv/broken.csv" in brief_of(scratch).tables


def test_tree_is_bounded(tmp_path: Path) -> None:
    for i in range(40):
        (tmp_path / "context" / "csv").mkdir(parents=True, exist_ok=True)
        (tmp_path / "context" / "csv" / f"t{i:02d}.csv").write_text("a\n1\n")
    tree = render_tree(ScratchLayout.of(tmp_path))
    assert "… 15 more files (60 B)" in tree
    assert "t24.csv" in tree and "t25.csv" not in tree
    short = render_tree(ScratchLayout.of(tmp_path), max_lines=5)
    assert len(short.splitlines()) == 5 and short.endswith("more lines not shown")
