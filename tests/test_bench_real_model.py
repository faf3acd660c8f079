"""benchmarks/real_model.py's own bookkeeping (the benchmark itself needs llama-server, a 1 GB model
and hours of CPU, so it is not run here): the counting proxy in front of the server, the starter
kit's renumbered copy of the tasks, the fixed task mix."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import httpx
import pytest

from datasolver.llm.fake import ScriptedServer, delay
from tests.helpers.benchscripts import load_benchmark

SHARED = Path(__file__).resolve().parents[2] / "shared" / "tasks"



def load_bench():
    return load_benchmark("real_model")


def chat(url: str, question: str, timeout: float = 30.0) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "system", "content": "rules " * 400},
                                       {"role": "user", "content": f"# Question\n{question}"}]}
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=timeout)


def test_the_proxy_counts_requests_tokens_and_cache_per_harness_and_task(tmp_path: Path) -> None:
    bench = load_bench()
    with ScriptedServer(["one", "two", "three"], prefill_rate=50.0) as server:
        with bench.CountingProxy(server.base_url.removesuffix("/v1"), tmp_path / "requests.jsonl") as proxy:
            proxy.questions = {"task_a": "How many orders?", "task_b": "Which city?"}
            proxy.label = {"harness": "datasolver"}
            first = chat(proxy.url, "How many orders?")
            chat(proxy.url, "How many orders?")  # the same prompt: read from the cache
            proxy.label = {"harness": "kit", "task": "task_b"}
            chat(proxy.url, "something else")  # quotes no question: the label's task
            assert httpx.get(f"{proxy.url}/v1/models", timeout=10).status_code == 200  # passed through, not counted
    assert first.status_code == 200 and first.json()["choices"][0]["message"]["content"] == "one"
    a = bench.request_totals(tmp_path / "requests.jsonl", "datasolver", "task_a")
    assert (a["requests"], a["cancelled"], a["completion_tokens"] > 0) == (2, 0, True)
    assert a["cached_tokens"] >= a["prompt_tokens"] // 2 - 10 and a["first_prompt_tokens"] == a["prompt_tokens"] // 2
    assert a["prefill_s"] == pytest.approx(a["prefilled_tokens"] / 50.0, abs=0.2)
    assert bench.request_totals(tmp_path / "requests.jsonl", "kit", "task_b")["requests"] == 1
    replies = [json.loads(line)["reply"] for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    assert replies == ["one", "two", "three"]


def test_a_client_that_leaves_closes_its_upstream_request_and_is_counted_cancelled(tmp_path: Path) -> None:
    bench = load_bench()
    with ScriptedServer([delay(5.0, "late")], one_at_a_time=True) as server:
        with bench.CountingProxy(server.base_url.removesuffix("/v1"), tmp_path / "requests.jsonl") as proxy:
            proxy.label = {"harness": "kit", "task": "task_a"}
            with pytest.raises(httpx.ReadTimeout):
                chat(proxy.url, "q", timeout=0.5)
            for _ in range(100):  # the proxy notices the client left and drops the upstream request
                if server.disconnects:
                    break
                time.sleep(0.05)
        assert server.disconnects == 1
    totals = bench.request_totals(tmp_path / "requests.jsonl", "kit", "task_a")
    assert (totals["requests"], totals["cancelled"], totals["prompt_tokens"]) == (1, 1, 0)


def test_the_starter_kit_gets_renumbered_tasks_with_only_the_keys_it_accepts(tmp_path: Path, dev_tasks: Path) -> None:
    bench = load_bench()
    chosen = bench.pick_tasks("3")
    ids = bench.kit_dataset(chosen, tmp_path / "kit" / "input")
    assert list(ids.values()) == ["task_1", "task_2", "task_3"] and list(ids) == [t for _, t in chosen]
    for (split, task), kit_id in zip(chosen, ids.values()):
        meta = json.loads((tmp_path / "kit" / "input" / kit_id / "task.json").read_text(encoding="utf-8"))
        original = json.loads((bench.SHARED_TASKS / split / "input" / task / "task.json").read_text(encoding="utf-8"))
        assert set(meta) == {"task_id", "difficulty", "question"} and meta["task_id"] == kit_id
        assert meta["question"] == original["question"]
        assert (tmp_path / "kit" / "input" / kit_id / "context").is_dir()
    assert json.loads((tmp_path / "kit" / "task_map.json").read_text(encoding="utf-8")) == ids


def test_the_fixed_mix_is_six_and_six_and_any_prefix_mixes_both() -> None:
    bench = load_bench()
    splits = [split for split, _ in bench.TASKS]
    assert (splits.count("dev"), splits.count("dev-en")) == (6, 6) and len(set(bench.TASKS)) == 12
    assert [s for s, _ in bench.pick_tasks("6")].count("dev") == 2
    assert bench.pick_tasks("task_retqa_v979,task_en_geography_24") == [("dev", "task_retqa_v979"),
                                                                         ("dev-en", "task_en_geography_24")]


def test_a_pair_run_again_forgets_its_earlier_requests_and_keeps_the_others(tmp_path: Path) -> None:
    # A datasolver run whose rows were dropped and run again had its old requests counted too.
    bench = load_bench()
    log = tmp_path / "requests.jsonl"
    records = [{"harness": "datasolver", "task": "a", "prompt_tokens": 10}] * 2 + [
        {"harness": "kit", "task": "a", "prompt_tokens": 5}, {"harness": "datasolver", "task": "b", "prompt_tokens": 7}]
    log.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n", encoding="utf-8")
    assert bench.forget_requests(log, "datasolver", {"a"}) == 2
    assert bench.request_totals(log, "datasolver", "a")["requests"] == 0
    assert bench.request_totals(log, "kit", "a")["prompt_tokens"] == 5
    assert bench.request_totals(log, "datasolver", "b")["prompt_tokens"] == 7
    assert "not json" in log.read_text(encoding="utf-8")  # a line it cannot read is not its to drop


# -- the one-shot baseline (benchmarks/oneshot.py) -------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "datasolver" / "examples"


def test_oneshot_reads_the_query_from_a_sql_block_or_a_bare_select() -> None:
    oneshot = load_benchmark("oneshot")
    assert oneshot.query_of("Here:\n```sql\nSELECT 1;\n```\nthanks") == "SELECT 1"
    assert oneshot.query_of("SELECT a FROM t WHERE b = 2; -- done") == "SELECT a FROM t WHERE b = 2"
    assert oneshot.query_of("I cannot answer that.") is None


def test_oneshot_repairs_once_on_an_error_and_the_prediction_is_datasolvers(tmp_path: Path) -> None:
    """The scripted model first names a table that does not exist, sees the error with the nearest
    names, then answers right; `datasolver solve` writes the prediction, which scores 1.0."""
    from datasolver.eval import score_files

    oneshot = load_benchmark("oneshot")
    right = json.loads((EXAMPLES / "solutions.json").read_text(encoding="utf-8"))["task_demo_sales"]["sql"]
    replies = ["```sql\nSELECT category FROM no_such_table\n```", f"```sql\n{right}\n```"]
    with ScriptedServer(replies) as server:
        ran = oneshot.solve(EXAMPLES / "input" / "task_demo_sales", tmp_path, server.base_url, "m", 120)
        sent = [r["messages"] for r in server.requests]
    assert (ran["status"], ran["requests"], len(ran["errors"])) == ("answered", 2, 1)
    assert "no_such_table" in ran["errors"][0]
    assert "The query failed" in sent[1][-1]["content"] and "# Tables" in sent[0][-1]["content"]
    gold = EXAMPLES / "output" / "task_demo_sales" / "gold.csv"
    assert score_files(ran["prediction"], gold).score == 1.0


# -- issue 46's mixed sets -------------------------------------------------------------------------
# Only the ids are read here: the unread mix's folders, questions and gold are never opened.


def test_the_two_mixes_are_24_tasks_of_the_drawn_shape_and_apart_from_each_other_and_the_easy_sets() -> None:
    bench = load_bench()
    fixed12 = {f"{split}/{task}" for split, task in bench.TASKS}
    heldout = {f"{split}/{task}" for split, task in bench.HELDOUT}
    for mix in (bench.MIX_FIXED, bench.MIX_UNREAD):
        assert {level: len(ids) for level, ids in mix.items()} == {"easy": 7, "medium": 12, "hard": 5}
    fixed = {e for ids in bench.MIX_FIXED.values() for e in ids}
    unread = {e for ids in bench.MIX_UNREAD.values() for e in ids}
    assert len(fixed) == len(unread) == 24 and not fixed & unread
    assert set(bench.MIX_FIXED["easy"]) <= fixed12  # the fixed mix's easy tasks: from the fixed 12
    assert not (fixed - set(bench.MIX_FIXED["easy"])) & (fixed12 | heldout)
    assert not unread & (fixed12 | heldout)


def test_the_second_unread_mix_holds_every_task_no_other_set_holds_and_six_held_out_easy_ones() -> None:
    bench = load_bench()
    earlier = {f"{split}/{task}" for split, task in bench.TASKS + bench.HELDOUT}
    for mix in (bench.MIX_FIXED, bench.MIX_UNREAD):
        earlier |= {e for ids in mix.values() for e in ids}
    second = {e for ids in bench.MIX_UNREAD2.values() for e in ids}
    assert {level: len(ids) for level, ids in bench.MIX_UNREAD2.items()} == {"easy": 7, "medium": 12, "hard": 2}
    assert len(second) == 21
    heldout = {f"{split}/{task}" for split, task in bench.HELDOUT}
    assert len(second & heldout) == 6 and second & earlier == second & heldout
    if SHARED.is_dir():  # the rest of the tasks: every one no earlier set holds (ids only, nothing opened)
        every = {f"{split}/{d.name}" for split in ("dev", "dev-en") for d in (SHARED / split / "input").iterdir()}
        assert every - earlier == second - heldout


@pytest.mark.parametrize("name", ["mix", "unread", "unread2"])
def test_a_mix_is_interleaved_so_any_prefix_mixes_the_difficulties(name: str) -> None:
    bench = load_bench()
    chosen = bench.pick_tasks(name)
    mix = bench.MIXES[name]
    assert sorted(f"{s}/{t}" for s, t in chosen) == sorted(e for ids in mix.values() for e in ids)
    levels = [bench.KNOWN_DIFFICULTY[task] for _, task in chosen]
    for level, ids in mix.items():  # each difficulty within about half its spacing of the start
        assert level in levels[:math.ceil(len(levels) / len(ids) / 2) + 1]
    for n in range(1, len(levels) + 1):  # each difficulty within one task of its share of any prefix
        for level, ids in mix.items():
            assert abs(levels[:n].count(level) - n * len(ids) / len(levels)) <= 1.0
    assert bench.difficulty_of(*chosen[0]) == levels[0]  # from the mix, no task.json read


def test_every_figure_of_the_markdown_is_split_per_difficulty_beside_the_one_shot() -> None:
    bench = load_bench()
    common = {"answered": True, "cancelled": 0, "completion_tokens": 10, "prefill_s": 1.0, "status": "solved",
              "first_prompt_tokens": 900}
    rows = [{**common, "harness": h, "task": f"t{i}", "difficulty": level, "score": score, "seconds": secs,
             "requests": req, "prompt_tokens": 1000 * req, "cached_tokens": 500 * req}
            for i, (h, level, score, secs, req) in enumerate([
                ("datasolver", "easy", 1.0, 60, 1), ("oneshot", "easy", 0.0, 30, 1),
                ("datasolver", "hard", 0.5, 200, 8), ("oneshot", "hard", 1.0, 40, 2),
                ("datasolver", "hard", 0.0, 100, 4)])]
    meta = {"model": "m", "runs": [{"command": "x", "started": "now", "deadline": 450, "load_before": "0"}]}
    text = bench.markdown(meta, rows)
    table = {tuple(cell.strip() for cell in line.strip("|").split("|")[:3]): line
             for line in text.splitlines() if line.startswith("| ")}
    assert ("hard", "datasolver", "2") in table and ("hard", "oneshot", "1") in table
    assert ("easy", "datasolver", "1") in table and ("all", "datasolver", "3") in table
    assert not any(key[0] == "medium" for key in table)  # no rows, no line
    hard = [c.strip() for c in table[("hard", "datasolver", "2")].strip("|").split("|")]
    # mean score, right, answered, seconds per task (median), requests, prompt and cached tokens per task
    assert hard[3:10] == ["0.250", "0", "2", "150 (150)", "6.0", "6,000", "3,000"]


def test_the_markdown_says_how_often_each_confidence_label_was_right() -> None:
    bench = load_bench()
    common = {"answered": True, "cancelled": 0, "completion_tokens": 10, "prefill_s": 1.0, "status": "solved",
              "first_prompt_tokens": 900, "seconds": 50, "requests": 1, "prompt_tokens": 1000, "cached_tokens": 0,
              "difficulty": "medium"}
    rows = [{**common, "harness": "datasolver", "task": f"t{i}", "score": score, "confidence": label}
            for i, (score, label) in enumerate([(1.0, "high"), (1.0, "high"), (0.0, "high"), (1.0, "medium"),
                                                 (0.5, "low"), (0.0, "low")])]
    rows.append({**common, "harness": "oneshot", "task": "t0", "score": 1.0})  # no label: not in the table
    meta = {"model": "m", "runs": [{"command": "x", "started": "now", "deadline": 450, "load_before": "0"}]}
    text = bench.markdown(meta, rows)
    assert "| datasolver | high | 3 | 2 | 67% | 0.667 |" in text
    assert "| datasolver | medium | 1 | 1 | 100% | 1.000 |" in text
    assert "| datasolver | low | 2 | 0 | 0% | 0.250 |" in text
    assert "| oneshot | high" not in text
    assert "confidence" not in bench.markdown(meta, [r for r in rows if r["harness"] == "oneshot"]).lower()
