"""What the real 1.5B model did on the direct answer request (tests/fixtures/direct_replies.json,
recorded by benchmarks/real_model.py), replayed on the same dev tasks: each reply pinned with what
the agent must make of it. Skips without ../shared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.agent import Limits
from tests.helpers.agent import solve_scripted
from datasolver.eval import score_files
from datasolver.llm.fake import text
from datasolver.data import ScratchLayout, load_task
from datasolver.pipeline import prepare_task_documents
from datasolver.solver.prepare import prepare_task
from tests.helpers.paths import DEV_TASKS

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "direct_replies.json").read_text(encoding="utf-8"))
pytestmark = pytest.mark.skipif(not DEV_TASKS.is_dir(), reason="../shared/tasks/dev is absent (a user's clone)")


def reply(key: str):
    return text(RECORDED[key]["reply"])


def tasks_of(task: str) -> Path:
    """dev (Chinese) or dev-en (English, `task_en_…`)."""
    return DEV_TASKS.parent / ("dev-en" if task.startswith("task_en_") else "dev")


def run(tmp_path: Path, task: str, script, **limits):
    """The task prepared as `datasolver run` prepares it (its documents' tables written too), then solved."""
    scratch = prepare_task(tasks_of(task) / "input" / task, tmp_path / "scratch")
    prepare_task_documents(ScratchLayout.of(scratch), task=load_task(tasks_of(task) / "input" / task), settings=None)
    outcome, server, events = solve_scripted(scratch, script, limits=Limits(
        max_attempts=1, send_backs=0, direct_answer=True, **limits))
    return outcome, server, events


def score(outcome, task: str) -> float:
    return score_files(outcome.prediction, tasks_of(task) / "output" / task / "gold.csv").score


def test_two_projects_with_the_same_value_are_two_rows_not_duplicates(tmp_path: Path) -> None:
    """v2640: `SELECT 绿化率(%) … WHERE 项目名称 IN ('诺德阅墅', '悦境')` — two projects, both 30.0. The
    bare `绿化率(%)` is quoted by the data layer; the checks read the SQL that ran, so the IN list
    is seen and the two equal rows are the answer (the check once sent the model to DISTINCT, 0.00)."""
    outcome, server, events = run(tmp_path, "task_retqa_v2640", [reply("v2640_direct")])
    assert (outcome.status, len(server.requests)) == ("solved", 1)
    assert score(outcome, "task_retqa_v2640") == 1.0


def test_a_count_of_zero_from_a_date_written_otherwise_is_rewritten_with_the_datas_spelling(tmp_path: Path) -> None:
    """v2854: `WHERE 时间(月份) = '2022-07'` counts 0 (the data writes '2022年07月'): not published. Before
    the repair request, the program puts in the month the question linking found in that column
    (`data/rules/respelled_filter.py`); that candidate passes the checks and is published: one request."""
    outcome, server, events = run(tmp_path, "task_retqa_v2854", [reply("v2854_direct")])
    assert len(server.requests) == 1
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["passes"]) for c in candidates] == [("direct", False), ("rewrite 1", True)]
    assert "CHECK empty_result: the answer is a count of 0" in candidates[0]["blocking"][0]
    assert "'2022-07' → '2022年07月'" in candidates[1]["rewritten"]
    assert (outcome.status, score(outcome, "task_retqa_v2854")) == ("solved", 1.0)


def test_a_column_name_split_in_two_is_written_whole_by_the_program_before_any_repair(tmp_path: Path) -> None:
    """v1800: `SELECT DISTINCT GROUP 开发商 …` does not parse (the model wrote 集团开发商 half translated).
    The error's hint names the column, but the real model wrote the same query again in its repair turn
    and in two of three samples (stop 41's run); so before the repair request the program writes the
    name whole in place of the piece and the word beside it (`data/rules/whole_column_name.py`), and that candidate
    passes the checks: one request, the right answer."""
    outcome, server, events = run(tmp_path, "task_retqa_v1800", [reply("v1800_direct")])
    assert len(server.requests) == 1
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["passes"]) for c in candidates] == [("direct", False), ("rewrite 1", True)]
    assert candidates[1]["sql"].startswith('SELECT DISTINCT "集团开发商" FROM')
    assert 'the column name "集团开发商" written whole for `GROUP 开发商`' in candidates[1]["rewritten"]
    assert (outcome.status, score(outcome, "task_retqa_v1800")) == ("solved", 1.0)


def test_when_no_rewrite_passes_two_samples_outvote_the_repeated_repair(tmp_path: Path) -> None:
    """v1800 again, with the rewrite finding nothing to do (the same replies, the program's rewrites
    turned off): the repair writes the failed query again (not run again); two samples at a higher
    temperature agree on `集团开发商`, and that answer is published."""
    script = [reply("v1800_direct"), reply("v1800_repair"), reply("v1800_sample_1"), reply("v1800_sample_2")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("datasolver.data.rules.offer.apply_on_error", lambda *args: [])
        outcome, server, events = run(tmp_path, "task_retqa_v1800", script)
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["passes"]) for c in candidates] == [
        ("direct", False), ("repair", False), ("sample 1", True), ("sample 2", True)]
    assert candidates[1]["repeated"] == "direct"
    assert (outcome.status, score(outcome, "task_retqa_v1800")) == ("solved", 1.0)


def test_a_column_taken_from_the_wrong_table_of_a_join_is_rewritten_to_the_column_the_question_names(
        tmp_path: Path) -> None:
    """v1800 (this stop's run of the fixed 12): `SELECT DISTINCT T2.所属集团 … ON T1.地块名称 = T2.项目名称`
    fails (T2, the price table, has no 所属集团; DuckDB offers its 集团开发商), and the real model wrote it
    again in its repair turn and two of three samples: 450 s, no answer. The program's rewrites
    (`data/rules/moved_column.py`): the column the question linking links (the question's 开发 in
    集团开发商) first; that query runs and finds nothing (the join pairs a plot's name with a project's
    name), so its own rewrite answers from the one table that holds what it selects: one request."""
    outcome, server, events = run(tmp_path, "task_retqa_v1800", [reply("v1800_binder_direct")])
    assert len(server.requests) == 1
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["ok"], c["passes"]) for c in candidates] == [
        ("direct", False, False), ("rewrite 1", True, False), ("rewrite 2", True, True)]
    assert "T2.集团开发商, the column of" in candidates[1]["rewritten"] and "the question names" in candidates[1]["rewritten"]
    assert [c.get("rule") for c in candidates] == [None, "moved_column", "one_table"]  # the trace names each rule
    assert (outcome.status, score(outcome, "task_retqa_v1800")) == ("solved", 1.0)


def test_an_answer_from_the_land_table_passes_its_checks_and_is_kept(tmp_path: Path) -> None:
    """v1800 (stop 41's run): `SELECT DISTINCT T1.所属集团 FROM land AS T1 JOIN price AS T2 …` reads the
    land buyer (所属集团) where the gold reads the developer (集团开发商). The query runs and passes every
    check, so it is published: a wrong answer no check can see (pinned here so a change to it is seen)."""
    outcome, server, events = run(tmp_path, "task_retqa_v1800", [reply("v1800_land_direct")])
    assert (outcome.status, len(server.requests)) == ("solved", 1)
    assert score(outcome, "task_retqa_v1800") == 0.0


def test_the_column_duckdb_offers_by_spelling_alone_is_not_taken(tmp_path: Path) -> None:
    """dev-en academic_7 (this stop's second run of the fixed 12): `… JOIN cite AS T2 … ORDER BY
    T2.citation_num` fails (citation_num is publication's). Taken from publication, the join repeats the
    top title 3 times (`duplicate_rows` blocks); DuckDB's offer for T2, `citing`, is a guess by spelling
    that the question does not name, and once published a wrong answer (0.00) that passed every check.
    It is not tried: the model gets its repair turn."""
    script = [reply("academic_7_binder_direct"), text("```sql\nSELECT title FROM publication ORDER BY "
                                                        "reference_num DESC LIMIT 3\n```")]
    outcome, server, events = run(tmp_path, "task_en_academic_7", script)
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["ok"], c["passes"]) for c in candidates] == [
        ("direct", False, False), ("rewrite 1", True, False), ("repair", True, True)]
    assert "citation_num taken from publication" in candidates[1]["rewritten"]
    assert not any('"citing"' in c["sql"] for c in candidates)
    assert len(server.requests) == 2 and score(outcome, "task_en_academic_7") == 1.0
