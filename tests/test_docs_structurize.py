"""LLM structurizer against the scripted server: planner JSON, a part table missing an id → retry
naming it, a normalizer that loops → timeout → original values kept, caching, prepare wiring."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from datasolver.documents import PrepareOptions, document_table_hints, prepare_documents_async
from datasolver.documents.structurize import StructurizeLimits, structurize_document
from datasolver.data import ScratchLayout
from datasolver.documents.errors import PlanError
from datasolver.documents.structurize.sections import split_parts
from datasolver.documents.structurize.workers import check_part_table
from datasolver.llm import LLMClient, LLMSettings
from datasolver.llm.fake import ScriptedModel, garbage, text

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

REPORT = """# 企业年度概况（2023）

本文介绍三家企业的年度情况。当天天气晴朗，与数据无关。

## 营业收入

甲公司全年营业收入为120.5亿元。乙公司营业收入最初报告为80亿元，后更正为82亿元。丙公司营业收入为1.5亿元。

## 负债

甲公司负债合计300亿元；乙公司负债合计为150亿元；丙公司负债合计约12000万元。
"""

PLAN = {
    "record_id_column": "企业名称",
    "record_ids": ["甲公司", "乙公司", "丙公司"],
    "columns": [{"name": "营业收入", "meaning": "亿元"}, {"name": "负债合计", "meaning": "亿元"}],
    "parts": [{"index": 0, "columns": []}, {"index": 1, "columns": ["营业收入"]}, {"index": 2, "columns": ["负债合计"]}],
}
REVENUE_MISSING_ONE = "| record_id | 营业收入 |\n|---|---|\n| 甲公司 | 120.5 |\n| 乙公司 | 82 |\n"
REVENUE = REVENUE_MISSING_ONE + "| 丙公司 | 1.5 |\n"
DEBT = "| record_id | 负债合计 |\n|---|---|\n| 甲公司 | 300 |\n| 乙公司 | 150 |\n| 丙公司 | 12000万 |\n"
LOOPING = "```python\ndef normalize(value):\n    while True:\n        pass\n```"
WORKING = (
    "```python\ndef normalize(value):\n"
    "    if value.endswith('万'):\n        return float(value[:-1]) / 10000\n"
    "    return float(value)\n```"
)
LIMITS = StructurizeLimits(max_part_chars=100, normalize_timeout_s=1.0)


def last_user(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


def make_handler(
    normalizer: str = LOOPING, vote: list[str] | None = None, plan: dict[str, Any] = PLAN
) -> Callable[[dict[str, Any]], Any]:
    """Answer by what the prompt asks for (requests arrive concurrently, so order is not fixed)."""

    def handler(body: dict[str, Any]) -> Any:
        prompt = last_user(body)
        first = body["messages"][0]["content"]
        if "Decide which of them" in prompt:
            return text(json.dumps({"relevant": vote or []}, ensure_ascii=False))
        if "You are planning" in first:
            return text("```json\n" + json.dumps(plan, ensure_ascii=False) + "\n```")
        if "List the `企业名称` of every record" in prompt:
            found = [i for i in ("甲公司", "乙公司", "丙公司") if i in prompt.split("<part>")[1]]
            return text(json.dumps({"record_ids": found}, ensure_ascii=False))
        if "Your table has these defects" in prompt:
            return text(REVENUE)
        if "Fill these columns" in first:
            return text(REVENUE_MISSING_ONE if "营业收入" in first.split("Records are identified")[1][:80] else DEBT)
        if "def normalize" in prompt or "Write a Python function" in prompt:
            return text(normalizer)
        raise AssertionError(f"unexpected prompt: {prompt[:200]}")

    return handler


def client(server: ScriptedModel) -> LLMClient:
    return LLMClient(LLMSettings(**server.connection(), api_key="test-key", model="fake-model", max_retries=0))


def test_parts_follow_headings() -> None:
    parts = split_parts(REPORT, 100)
    assert [(p.title, p.first_line, p.last_line) for p in parts] == [
        ("企业年度概况（2023）", 1, 4), ("营业收入", 5, 8), ("负债", 9, 11)
    ]


def test_part_table_defects_are_named() -> None:
    values, defects = check_part_table(
        "| record_id | x |\n|---|---|\n| a | 1 |\n| a | 2 |\n| zz | 3 |\n", ["a", "b"], ["x", "y"], "id"
    )
    assert values == {"a": {"x": "1"}}
    assert defects == [
        "missing columns: y",
        "missing record ids (1): b",
        "record ids not in my list (1): zz; use only the listed ids, spelled exactly",
        "record ids with more than one row: a; give each id exactly one row",
    ]
    assert check_part_table("no table here", ["a"], ["x"], "id")[1] == ["no Markdown table found in your answer"]


def test_structurize_retries_a_missing_id_and_keeps_values_when_the_normalizer_loops(tmp_path: Path) -> None:
    async def run(server: ScriptedModel) -> Any:
        async with client(server) as llm:
            return await structurize_document(
                llm, REPORT, document_name="report.md", knowledge="营业收入: 亿元", limits=LIMITS,
                document_sha256="abc", cache_dir=tmp_path,
            )

    with ScriptedModel(handler=make_handler()) as server:
        result = asyncio.run(run(server))
        requests = server.requests
    assert result.columns == ["企业名称", "营业收入", "负债合计"]
    assert result.key == "企业名称"
    assert result.rows == [["甲公司", "120.5", "300"], ["乙公司", "82", "150"], ["丙公司", "1.5", "12000万"]]
    retries = [r for r in requests if "Your table has these defects" in last_user(r)]
    assert len(retries) == 1
    assert "missing record ids (1): 丙公司" in last_user(retries[0])
    assert any("did not finish within 1s; original values kept" in w for w in result.warnings)
    assert ["丙公司", "营业收入", "1.5", "lines 5-8", ""] in result.provenance
    # Only the mixed-form column was sent for normalization, never the id column.
    assert sum("Write a Python function" in last_user(r) for r in requests) == 1

    # Same document, model and knowledge: served from the cache, no request at all.
    with ScriptedModel(script=[]) as server:
        cached = asyncio.run(run(server))
        assert server.requests == []
    assert cached.rows == result.rows


def test_a_working_normalizer_is_applied_through_the_value_map() -> None:
    async def run(server: ScriptedModel) -> Any:
        async with client(server) as llm:
            return await structurize_document(llm, REPORT, document_name="report.md", limits=LIMITS)

    with ScriptedModel(handler=make_handler(normalizer=WORKING)) as server:
        result = asyncio.run(run(server))
    assert [r[2] for r in result.rows] == ["300.0", "150.0", "1.2"]
    assert ["丙公司", "负债合计", "12000万", "lines 9-11", ""] in result.provenance  # original kept apart


def test_planner_garbage_is_retried_then_gives_up() -> None:
    async def run(server: ScriptedModel) -> Any:
        async with client(server) as llm:
            return await structurize_document(llm, REPORT, document_name="report.md", limits=LIMITS)

    with ScriptedModel(script=[text("I cannot do that."), text('{"record_ids": []}'), text("nope")]) as server:
        with pytest.raises(PlanError, match="no usable plan after 3 attempts"):
            asyncio.run(run(server))
        second = last_user(server.requests[1])
    assert "not valid JSON" in second or "Send the whole corrected JSON object" in second


def test_prepare_votes_structures_the_relevant_document_and_keeps_it_without_a_model(tmp_path: Path) -> None:
    task = tmp_path / "task_x"
    doc = task / "context" / "doc"
    doc.mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"question": "乙公司的营业收入是多少？"}, ensure_ascii=False))
    (doc / "report.md").write_text(REPORT, encoding="utf-8")
    (doc / "weather.md").write_text("# Weather\n\n" + "It was sunny all week, with a light breeze. " * 10)

    async def run(server: ScriptedModel) -> Any:
        async with client(server) as llm:
            return await prepare_documents_async(task, options=PrepareOptions(llm=llm, limits=LIMITS))

    with ScriptedModel(handler=make_handler(vote=["doc/report.md"])) as server:
        report = asyncio.run(run(server))
        votes = [r for r in server.requests if "Decide which of them" in last_user(r)]
    assert len(votes) == 5
    assert [(t.table, t.method, t.key, t.rows) for t in report.tables] == [("report", "llm", "企业名称", 3)]
    assert [(s.source, s.reason) for s in report.skipped] == [
        ("doc/weather.md", "not relevant to the question (relevance votes)")
    ]
    manifest = json.loads((task / "derived" / "manifest.json").read_text(encoding="utf-8"))
    entry = manifest["tables"][0]
    assert (entry["file"], entry["location"], entry["provenance"]) == ("report.csv", "lines 1-11", "report.provenance.csv")
    assert (task / "derived" / "report.provenance.csv").read_text(encoding="utf-8").startswith("record_id,column,value")
    assert "- report: 3 rows, from doc/report.md (lines 1-11, structured from prose by the model); key 企业名称" in (
        document_table_hints(task)
    )

    # Without a model (prepare --no-llm), the model's table stays while the document is unchanged.
    again = asyncio.run(prepare_documents_async(task))
    assert [t.table for t in again.tables] == ["report"]
    assert (task / "derived" / "report.csv").is_file()


def test_prepare_reports_a_failed_structurizer_as_a_skipped_document(tmp_path: Path) -> None:
    src = tmp_path / "data"
    src.mkdir()
    (src / "report.md").write_text(REPORT, encoding="utf-8")

    async def run(server: ScriptedModel) -> Any:
        async with client(server) as llm:
            return await prepare_documents_async(src, tmp_path / "out", PrepareOptions(llm=llm, limits=LIMITS))

    with ScriptedModel(script=[garbage(), garbage(), garbage()]) as server:
        report = asyncio.run(run(server))
    assert report.tables == []
    assert report.skipped[0].source == "report.md"
    assert report.skipped[0].reason.startswith("structurizer failed:")


def test_a_long_document_is_planned_from_an_outline_and_never_sent_whole() -> None:
    limits = StructurizeLimits(max_part_chars=100, max_plan_chars=60, normalize=False)
    partial_plan = dict(PLAN, record_ids=["甲公司", "乙公司"])  # the outline hid 丙公司

    async def run(server: ScriptedModel) -> Any:
        async with client(server) as llm:
            return await structurize_document(llm, REPORT, document_name="report.md", limits=limits)

    with ScriptedModel(handler=make_handler(plan=partial_plan)) as server:
        result = asyncio.run(run(server))
        requests = server.requests
    prompts = [m["content"] for r in requests for m in r["messages"]]
    assert "too long to show whole" in prompts[0]
    assert not any(REPORT.strip() in p for p in prompts)
    # Each part was asked for its ids; 丙公司 was found there and filled by the workers.
    assert sum("of every record this part states" in last_user(r) for r in requests) == 2
    assert [r[0] for r in result.rows] == ["甲公司", "乙公司", "丙公司"]
    assert result.rows[2] == ["丙公司", "1.5", "12000万"]


def test_the_pipelines_async_entry_structures_on_the_callers_loop_through_its_gate(tmp_path: Path) -> None:
    """`prepare_task_documents_async`: the model pass runs on the caller's event loop (no thread
    with a loop of its own), every request through the task's request gate and into its usage."""
    from contextlib import asynccontextmanager

    from datasolver.llm import NULL_TRACE, LLMClient, Usage
    from datasolver.pipeline.documents import prepare_task_documents_async
    from datasolver.solver.prepare import prepare_task
    from tests.helpers.solver import make_tiny_task

    task = make_tiny_task(tmp_path / "in")
    (task / "context" / "doc").mkdir()
    (task / "context" / "doc" / "report.md").write_text(REPORT, encoding="utf-8")
    scratch = prepare_task(task, tmp_path / "scratch")
    gated: list[int] = []

    @asynccontextmanager
    async def gate():
        gated.append(1)
        yield

    async def run(server: ScriptedModel) -> Any:
        settings = LLMSettings(**server.connection(), api_key="test-key", model="fake-model", max_retries=0)
        usage = Usage()
        async with LLMClient(settings, NULL_TRACE, usage, request_gate=gate) as client:
            report = await prepare_task_documents_async(ScratchLayout.of(scratch), client=client)
        return report, usage

    with ScriptedModel(handler=make_handler(vote=["doc/report.md"])) as server:
        report, usage = asyncio.run(run(server))
        sent = len(server.requests)
    # (The default part size gives the report one part, which the scripted three-part plan does
    # not fit: the model pass ran and said why it made no table.)
    assert [s.source for s in report.skipped] == ["doc/report.md"]
    assert report.skipped[0].reason.startswith("structurizer failed")
    assert sent > 0 and len(gated) == usage.requests == sent
