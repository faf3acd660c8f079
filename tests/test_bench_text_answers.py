"""benchmarks/text_answers.py and its harnesses in benchmarks/real_model.py (ask, oneshot_text): how a
text answer is scored against gold.csv, and the plumbing from the model to a results row, run with
the scripted model (the benchmark itself needs llama-server and hours of CPU)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.llm.fake import ScriptedServer, text, tool_call
from tests.helpers.benchscripts import load_benchmark
from tests.helpers.datafiles import write_task


def gold(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "gold.csv"
    path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize(("answer", "gold_csv", "contained", "missing"), [
    # numbers normalized as the official metric does: 2 places, grouping commas dropped
    ("The ratio is 0.3333.", "ratio\n0.3333333333333333\n", True, []),
    ("0.33", "ratio\n0.3333333333333333\n", True, []),
    ("0.35", "ratio\n0.3333333333333333\n", False, ["0.33"]),
    ("总价为2,122,050,000元", "成交总价\n2122050000\n", True, []),
    ("绿化率均为30%", "绿化率(%)\n30.0\n30.0\n", True, []),
    # text: NFKC, case and spacing aside; every distinct value must be there
    ("the pasta house, The  Sushi Bar", "name\nThe Pasta House\nThe Sushi Bar\n", True, []),
    ("The Pasta House", "name\nThe Pasta House\nThe Sushi Bar\n", False, ["The Sushi Bar"]),
    ("Nile 1000, Rhine 900", "river,length\nNile,1000\nRhine,900\nVolga,800\n", False, ["Volga", "800.00"]),
    ("1000,900", "length\n1000\n900\n", True, []),  # a list written without spaces is two numbers
    ("on 2019-12-01", "day\n2019/12/01\n", True, []),
    ("", "n\n0\n", False, ["0.00"]),
    ("@1", "成交数量\n1\n", False, ["1.00"]),  # the name of a stored result is no value (recorded: v256)
])
def test_a_text_answer_contains_every_gold_value(tmp_path: Path, answer: str, gold_csv: str, contained: bool,
                                                  missing: list[str]) -> None:
    bench = load_benchmark("text_answers")
    scored = bench.score_answer(answer, gold(tmp_path, gold_csv))
    assert (scored["contains_gold"], scored["missing"]) == (contained, missing)


def test_the_jaccard_score_is_the_seeds_over_the_gold_rows_written_out(tmp_path: Path) -> None:
    bench = load_benchmark("text_answers")
    path = gold(tmp_path, "city_name,population\nNew York,1000000\nChicago,1500000\n")
    assert bench.reference_text(bench.gold_rows(path)) == "New York 1000000, Chicago 1500000"
    assert bench.score_answer("New York (1000000), Chicago (1500000)", path)["jaccard"] == 1.0
    assert bench.score_answer("New York, Chicago", path)["jaccard"] == 0.6  # 3 of the 5 tokens


@pytest.fixture
def task(tmp_path: Path) -> Path:
    return write_task(tmp_path / "input", "task_t1", "What are the cities and their population?",
                      {"csv/cities.csv": "city,population\nParis,2100000\nLyon,520000\n"})


def test_the_ask_harness_runs_datasolver_ask_and_keeps_its_record_and_trace(tmp_path: Path, task: Path) -> None:
    bench = load_benchmark("text_answers")
    script = [text("```sql\nSELECT city, population FROM cities ORDER BY population DESC\n```")]
    with ScriptedServer(script) as server:
        ran = bench.run_ask(task, server.base_url, "scripted", 60, tmp_path / "work" / "ask" / task.name)
    assert ran["answer"] == "city (population): Paris (2100000), Lyon (520000)"  # the direct path's query, written
    assert (ran["backed"], ran["status"], ran["path"], ran["checks"]) == (True, "direct_answer", "direct", [])
    folder = tmp_path / "work" / "ask" / task.name
    assert json.loads((folder / "record.json").read_text(encoding="utf-8"))["evidence_sql"]
    assert (folder / "trace.jsonl").stat().st_size > 0


def test_an_unbacked_ask_answer_is_scored_as_printed_with_its_mark(tmp_path: Path, task: Path) -> None:
    bench = load_benchmark("text_answers")
    with ScriptedServer([text("Paris, Lyon")] * 3) as server:  # the direct reply wrote no query: the loop
        ran = bench.run_ask(task, server.base_url, "scripted", 60, tmp_path / "work" / "ask" / task.name)
    assert ran["answer"] == "[unbacked: no query result holds this answer] Paris, Lyon" and ran["backed"] is False
    assert ran["checks"] == ["no_result sent_back", "no_result unbacked"]


def test_the_text_harnesses_write_their_rows_and_tables_beside_the_others(tmp_path: Path, task: Path) -> None:
    bench = load_benchmark("real_model")
    log = tmp_path / "requests.jsonl"
    log.write_text(json.dumps({"harness": "ask", "task": "task_t1", "prompt_tokens": 900, "completion_tokens": 30})
                   + "\n", encoding="utf-8")
    bench.SHARED_TASKS = tmp_path  # gold from tmp_path/<split>/output/<task>/gold.csv
    (tmp_path / "dev" / "output" / "task_t1").mkdir(parents=True)
    (tmp_path / "dev" / "output" / "task_t1" / "gold.csv").write_text("city\nParis\nLyon\n", encoding="utf-8")
    rows = [bench.text_row("ask", "dev", "task_t1", {"answer": "Paris, Lyon", "backed": True, "status": "final_answer",
                                                     "checks": []}, 42.0, log, "1.0 / 1.0 / 1.0"),
            bench.text_row("oneshot_text", "dev", "task_t1", {"answer": "Paris", "status": "query"}, 9.0, log,
                           "1.0 / 1.0 / 1.0")]
    assert [(r["contains_gold"], r["jaccard"], r["requests"]) for r in rows] == [(True, 1.0, 1), (False, 0.5, 0)]
    meta = {"model": "m", "runs": [{"command": "c", "started": "s", "load_before": "l", "deadline": 450.0}]}
    bench.write_results(tmp_path, meta, rows)
    md = (tmp_path / "results.md").read_text(encoding="utf-8")
    assert "| ask | task_t1 | yes | 1.00 | yes | 1 | 900 + 30 | 42 | – | Paris, Lyon |" in md
    assert "| ask | 1 | 1 | 1.000 | 1 | 1 | 900 + 30 | 42 |" in md
    assert "| oneshot_text | 1 | 0 | 0.500 | 1 | 0 | 0 + 0 | 9 |" in md
    assert "| harness | tasks | mean score |" in md and "| ask | task_t1 | 1.00 | yes" not in md


def test_the_oneshot_text_answer_is_its_querys_rows_written_as_the_analyst_writes_them(tmp_path: Path,
                                                                                        task: Path) -> None:
    oneshot = load_benchmark("oneshot")
    reply = "```sql\nSELECT city, population FROM cities ORDER BY population DESC\n```"
    with ScriptedServer([text(reply)]) as server:
        ran = oneshot.oneshot_rows(task, tmp_path / "work", server.base_url, "scripted", 60)
    assert (ran["answer"], ran["requests"], ran["status"]) == ("Paris 2100000, Lyon 520000", 1, "query")
