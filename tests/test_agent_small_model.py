"""The failures of a real small model (Qwen2.5-Coder-1.5B behind llama.cpp, issue 25), each
pinned: a scripted OpenAI-compatible server plays replies in the style that model sent, and each
run must reach an answer, or end with a reason that says what the model did. Before these
changes every one of them ended "answered without prediction.csv".

The model wrote its calls as JSON in the content (read as text calls). Its habits: run_solver
first with the schema's default arguments; then no call but ```python\\nresult = None\\n```,
pandas code reading a made-up CSV path, a long prose plan, or an invented "Result" table; and,
now and then, exactly the right ```sql block after NO OUTPUT.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.agent import Limits
from tests.helpers.agent import solve_at_transport
from datasolver.eval import score_files
from datasolver.llm.fake import Text, text
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import PAPER_SQL, make_paper_task
from tests.helpers.paths import SHARED

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

ANSWER_CSV = "title\nAdaptive Joins\nMedian Sketches\nZebra Streams\n"

# The replies, as the model wrote them: recorded ones where we have them (tests/fixtures), else in
# the style the issue describes.
RECORDED = json.loads((Path(__file__).parent / "fixtures" / "small_model_replies.json").read_text(encoding="utf-8"))
RUN_SOLVER_DEFAULTS = text(RECORDED["run_solver_defaults"]["reply"])  # a ```json block, the schema's defaults
RESULT_NONE = text("```python\nresult = None\n```")
MADE_UP_PATH = text("To answer, load the data and filter it:\n```python\nimport pandas as pd\n"
                    "df = pd.read_csv('/data/papers/paper.csv')\n"
                    "result = df[df['year'] == 2020].sort_values('title')[['title']]\n```")
INVENTED_TABLE = text("Here is the result:\n\n| Result |\n|---|\n| Deep Learning Advances |\n| Quantum Data |\n")
PROSE_PLAN = text(" ".join(["To solve this task I will first look at the paper table, then I will check which"
                            " columns hold the year and the title, then filter the rows and sort them."] * 19))
TOOL_RESULT_ECHOED = text(RECORDED["tool_result_echoed"]["reply"])  # NO OUTPUT written again, in <tool_response>
DONE_AT_START = text(RECORDED["done_at_attempt_start"]["reply"])  # "Done." as a new attempt's first reply
DONE = text("The titles of the papers published in 2020 are listed in prediction.csv.")


def sql_block(sql: str) -> Text:
    return text(f"The query is:\n```sql\n{sql}\n```")


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return prepare_task(make_paper_task(tmp_path / "input"), tmp_path / "scratch")


def solve(scratch: Path, script, limits: Limits = Limits(max_attempts=1)):
    # A real server cuts a reply at max_tokens.
    return solve_at_transport(scratch, script, limits=limits, server_options={"honor_max_tokens": True})


def test_the_right_sql_block_after_no_output_is_the_answer(scratch: Path) -> None:
    outcome, server, events = solve(scratch, [RUN_SOLVER_DEFAULTS, sql_block(PAPER_SQL), DONE])
    assert outcome.status == "solved" and outcome.requests == 3
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    no_output = server.requests[1]["messages"][-1]["content"]
    assert "NO OUTPUT" in no_output and 'edit_solver {"sql": ' in no_output  # the next step, ready to copy
    assert 'explore_data {"query": "SELECT * FROM paper LIMIT 5"}' in no_output


def test_result_none_is_sent_back_then_the_sql_block_answers(scratch: Path) -> None:
    outcome, _, events = solve(scratch, [RUN_SOLVER_DEFAULTS, RESULT_NONE, sql_block(PAPER_SQL), DONE])
    assert outcome.status == "solved"
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    assert [e["event"] for e in events].count("sent_back") == 1


def test_a_long_prose_plan_is_cut_at_the_cap_and_the_sql_block_answers(scratch: Path) -> None:
    outcome, server, events = solve(scratch, [RUN_SOLVER_DEFAULTS, PROSE_PLAN, sql_block(PAPER_SQL), DONE])
    assert outcome.status == "solved"
    assert server.requests[1]["max_tokens"] == Limits().tool_reply_tokens  # a call was expected
    [sent_back] = [e for e in events if e["event"] == "sent_back"]  # cut, then sent back like prose
    [response] = [e for e in events if e["event"] == "response" and e.get("request_id") == sent_back["request_id"]]
    assert response["usage"]["completion_tokens"] <= Limits().tool_reply_tokens + 20  # not the whole 584 tokens


def test_made_up_path_and_invented_table_end_with_a_reason_then_the_next_attempt_answers(scratch: Path) -> None:
    script = [RUN_SOLVER_DEFAULTS, MADE_UP_PATH, INVENTED_TABLE,  # attempt 1: sent back once, then over
              sql_block(PAPER_SQL), DONE]  # attempt 2
    outcome, server, events = solve(scratch, script, Limits(max_attempts=2))
    assert outcome.status == "solved" and outcome.attempts == 2
    first = outcome.attempt_results[0]
    assert (first.ended, first.sent_back) == ("answered", 1)
    assert "Code in a reply is not run" in server.requests[2]["messages"][-1]["content"]  # the send-back said so
    opening = next(r for r in server.requests[3:] if len(r["messages"]) == 2)["messages"][1]["content"]
    assert "run_solver: NO OUTPUT" in opening  # attempt 2 starts from what attempt 1 met


def test_a_model_that_never_writes_a_query_ends_with_what_it_wrote(scratch: Path) -> None:
    outcome, _, _ = solve(scratch, [RUN_SOLVER_DEFAULTS, MADE_UP_PATH, INVENTED_TABLE])
    assert outcome.status == "failed"
    assert outcome.reason.startswith("attempt 1 ended (answered with a table typed as text) without prediction.csv")


def test_a_wrong_table_in_the_sql_block_shows_the_error_and_the_fix_answers(scratch: Path) -> None:
    script = [RUN_SOLVER_DEFAULTS, sql_block("SELECT title FROM Result WHERE year = 2020"),
              sql_block(PAPER_SQL), DONE]
    outcome, server, events = solve(scratch, script)
    assert outcome.status == "solved"
    adopted = [(e["ran"], e["query"]) for e in events if e["event"] == "query_adopted"]
    assert adopted == [(False, "SELECT title FROM Result WHERE year = 2020"), (True, PAPER_SQL)]


def test_an_echoed_tool_result_is_sent_back_and_the_sql_it_asks_for_answers(scratch: Path) -> None:
    outcome, server, _ = solve(scratch, [RUN_SOLVER_DEFAULTS, TOOL_RESULT_ECHOED, sql_block(PAPER_SQL), DONE])
    assert outcome.status == "solved"
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    # The calls the echoed result suggests (a placeholder edit, a look at the table) were not run.
    assert outcome.attempt_results[0].sent_back == 1
    assert "```sql block" in server.requests[2]["messages"][-1]["content"]


def test_done_at_a_new_attempts_start_is_sent_back_for_the_sql(scratch: Path) -> None:
    script = [RUN_SOLVER_DEFAULTS, DONE_AT_START, DONE_AT_START,  # attempt 1: sent back once, then over
              DONE_AT_START, sql_block(PAPER_SQL), DONE]  # attempt 2: "Done." again, then the SQL asked for
    outcome, server, _ = solve(scratch, script, Limits(max_attempts=2))
    assert outcome.status == "solved" and outcome.attempts == 2
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    assert "```sql block" in server.requests[4]["messages"][-1]["content"]


GEOGRAPHY = SHARED / "tasks" / "dev-en"
GEOGRAPHY_TASK = "task_en_geography_24"


def test_a_real_dev_en_task_is_answered_from_the_sql_block(tmp_path: Path) -> None:
    oracle = GEOGRAPHY / "oracle.jsonl"
    if not oracle.is_file():
        pytest.skip(f"{GEOGRAPHY} is absent (only present beside the project's own checkout)")
    entry = next(json.loads(line) for line in oracle.read_text(encoding="utf-8").splitlines()
                 if GEOGRAPHY_TASK in line)
    scratch = prepare_task(GEOGRAPHY / "input" / GEOGRAPHY_TASK, tmp_path / "scratch")
    outcome, _, _ = solve(scratch, [RUN_SOLVER_DEFAULTS, RESULT_NONE, sql_block(entry["sql"]),
                                    text("Done.")])
    assert outcome.status == "solved"
    score = score_files(outcome.prediction, GEOGRAPHY / "output" / GEOGRAPHY_TASK / "gold.csv")
    assert score.score == 1.0, score.reason
