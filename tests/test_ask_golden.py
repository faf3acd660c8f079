"""The golden set: question files, scoring with the Jaccard scorer, duplicates answered once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from datasolver.ask import AskConfig, load_golden, run_golden
from datasolver.ask.errors import GoldenSetError
from datasolver.llm import LLMSettings
from datasolver.llm.fake import ScriptedModel, text, tool_call

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "sales.csv").write_text("region,amount\nNorth,10\nSouth,9\n", encoding="utf-8")
    return folder


def write(path: Path, items: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(i, ensure_ascii=False) for i in items), encoding="utf-8")
    return path


def test_formats_and_data_dirs(tmp_path: Path, data: Path) -> None:
    jsonl = write(tmp_path / "g.jsonl", [{"question": "Q1?", "answer": "A"},
                                         {"id": "x", "question": "Q2?", "reference": 5, "data_dir": "shop"}])
    items = load_golden(jsonl, data_dir=tmp_path / "shop")
    assert [(i.id, i.question, i.reference, i.data_dir.name) for i in items] == [
        ("1", "Q1?", "A", "shop"), ("x", "Q2?", "5", "shop")]
    listed = tmp_path / "g.json"
    listed.write_text(json.dumps([{"question": "Q?", "answer": "A", "data_dir": "shop"}]), encoding="utf-8")
    assert load_golden(listed)[0].data_dir == tmp_path / "shop"
    table = tmp_path / "g.csv"
    table.write_text("id,question,answer\nc1,Which?,North\n", encoding="utf-8")
    assert load_golden(table, data)[0].reference == "North"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"question": "Q?"}', "item 1 needs a 'question' and an 'answer'"),
        ('{"question": "Q?", "answer": "A"}', "item 1 has no data_dir"),
        ('{"question": "Q?", "answer": "A", "data_dir": "nowhere"}', "data folder"),
        ("[1]", "item 1 is not an object"),
        ("{broken", "not JSON Lines or a JSON list"),
        ("", "holds no questions"),
    ],
)
def test_bad_files_are_named(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(GoldenSetError, match=message):
        load_golden(path)


def test_run_scores_with_jaccard_and_answers_duplicates_once(tmp_path: Path, data: Path) -> None:
    items = load_golden(write(tmp_path / "g.jsonl", [
        {"id": "a", "question": "Which region sold most?", "answer": "North"},
        {"id": "b", "question": "Which region sold  most??", "answer": "North"},  # the same after cleaning
        {"id": "c", "question": "Both regions?", "answer": "North, South"},
        {"id": "d", "question": "   ", "answer": "x"},
    ]), data)
    script = [tool_call("query", {"sql": "SELECT region FROM sales ORDER BY amount DESC LIMIT 1"}), text("North"),
              tool_call("query", {"sql": "SELECT region FROM sales"}), tool_call("final_answer", {"answer": "{DATA}"})]
    with ScriptedModel(script) as server:
        settings = LLMSettings(**server.connection(), api_key=None, model="fake", max_retries=0)
        report = asyncio.run(run_golden(items, settings=settings, config=AskConfig(direct_answer=False)))
        assert len(server.requests) == 4
    scores = {r.id: (r.answer, r.score, r.reused) for r in report.results}
    assert scores == {"a": ("North", 1.0, False), "b": ("North", 1.0, True),
                      "c": ("North, South", 1.0, False), "d": ("", 0.0, False)}
    assert report.results[3].error.startswith("EmptyQuestion")
    assert report.mean == 0.75 and report.usage["requests"] == 4
    assert report.to_dict()["review"] is False
