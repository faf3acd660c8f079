"""What the real small model did with `datasolver ask` on the benchmark's tasks, pinned by replaying
its recorded replies (tests/fixtures/ask_real_model_replies.json, from benchmarks/real_model.py
--harness ask): real models in benchmarks, their recorded replies in tests. Each replay must use
every recorded reply and ask for no other; the task's data comes from ../shared/tasks (skipped
where absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.ask import AskLimits
from datasolver.cli import cli
from datasolver.llm import LLMError, TraceWriter, read_trace
from datasolver.llm.fake import SCRIPTED_BASE_URL, text
from tests.helpers.askcli import cli_model
from tests.helpers.askreplay import recorded, recorded_task, replay

pytestmark = pytest.mark.fast


def test_the_right_query_then_three_of_four_cities_without_populations_is_written_from_the_result(
        tmp_path: Path) -> None:
    # Issue 35's third transcript, reproduced: the right query (@1, 4 rows of city and population),
    # then "The cities in the United States are: New York, Los Angeles, Chicago." The program writes @1.
    result, cursor = replay("geography_24_three_of_four_cities", tmp_path)
    assert (cursor.served, cursor.missing, cursor.unused) == (2, 0, 0)
    assert result.answer == "New York (1000000), Los Angeles (5000000), Chicago (1500000), Houston (2000000)"
    assert [(c.check, c.action, c.detail) for c in result.checks] == [
        ("partial_list", "rewrote", "the answer named 3 of 4 rows of @1 and not its column population; written from "
                                    "@1 (city_name, population)")]
    assert result.backed_by_query and result.template == "{DATA}"


# -- issue 35's second run (ask 3 of 12): non-answers and "nothing matches" on the unchanged query -------------

def ask_cli(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str, direct: bool = False):
    """`datasolver ask TASK --no-direct-answer ARGS` (with `direct`, the direct path first) as a person runs
    it, the recorded raw replies answered in order at the client's transport (the client reads their
    written tool calls as it read the real server's)."""
    task = recorded_task(name)
    replies = recorded(name)["replies"]
    with cli_model([text(r["content"]) for r in replies]) as model:
        monkeypatch.setenv("MODEL_API_URL", SCRIPTED_BASE_URL)
        monkeypatch.setenv("MODEL_NAME", "replay")
        monkeypatch.setenv("DATASOLVER_DOC_CACHE", str(tmp_path / "doc-cache"))
        result = CliRunner().invoke(cli, ["ask", str(task), "--direct-answer" if direct else "--no-direct-answer",
                                          "--table-cache", "off", *args], catch_exceptions=False)
    return result, model


def test_an_answer_that_names_the_latest_result_is_written_from_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The model answered `@latest` before any query (nothing is stored yet: it is told so), ran the right query
    # (@1: the two restaurants), answered `@latest` again, then `{}`; `{}` was printed as the answer. Now
    # the second `@latest` names @1 and the program writes @1's rows (`{}`, never reached, is no answer
    # either: tests/test_ask_checks.py).
    result, server = ask_cli("restaurants_24_an_empty_object_as_the_answer", tmp_path, monkeypatch,
                             "--max-requests", "4")
    # the loop's answer after one send-back (the `@latest` of nothing): two rounds, low
    assert (result.exit_code, result.stdout, result.stderr) == (0, "name: The Pasta House, The Sushi Bar\n",
                                                                "confidence: low (2 repairs)\n")
    assert len(server.requests) == 3
    assert server.requests[1]["messages"][-1]["content"].startswith(  # the first `@latest`: nothing stored yet
        "No stored result backs your answer: nothing has been queried yet.")


def test_none_is_sent_back_once_then_a_clear_no_answer_is_printed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its query found nothing (@1); it answered `None` twice, and `None` was printed as a backed answer.
    result, server = ask_cli("v1800_none_as_the_answer", tmp_path, monkeypatch, "--json")
    record = json.loads(result.stdout)
    assert result.exit_code == 0 and len(server.requests) == 3
    sent_back = server.requests[2]["messages"][-1]["content"]
    assert sent_back.startswith("Your reply is not an answer (`None` says nothing). Answer the question itself")
    assert "Your answer rests on @1: no rows. Re-run without each filter" in sent_back  # the diagnosis with it
    assert record["answer"] == ("[no answer: the model's answer was no answer (`None` says nothing), and no stored "
                                "result has rows]")
    assert (record["backed_by_query"], record["unbacked"]) == (
        False, "the model's answer was no answer (`None` says nothing), and no stored result has rows")
    assert [(c["check"], c["action"]) for c in record["checks"]] == [("non_answer", "sent_back"),
                                                                     ("non_answer", "unbacked")]


def test_our_own_send_back_text_is_never_the_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # After the "query first" send-back and one empty query, the model answered with the send-back's own
    # text, twice; it was printed as the answer.
    result, _ = ask_cli("v2854_our_own_send_back_as_the_answer", tmp_path, monkeypatch)
    assert result.exit_code == 0
    assert result.stdout == ("[no answer: the model's answer was no answer (it repeats what we sent you: `No stored "
                             "result backs your answer: noth`), and no stored result has rows]\n")
    assert "No stored result backs your answer" not in result.stdout.split("(it repeats")[0]
    assert result.stderr.startswith("note: the model's answer was no answer (it repeats what we sent you")


def test_nothing_matches_on_the_unchanged_query_is_sent_back_while_requests_remain(tmp_path: Path) -> None:
    # After the empty-result send-back (the nearest values shown) the model answered "There are no rows that
    # match" again without running any query: no longer accepted; it is asked again (the recording ends there).
    trace = TraceWriter(tmp_path / "trace.jsonl")
    with pytest.raises(LLMError):
        replay("v979_nothing_matches_on_the_unchanged_query", tmp_path / "cache", trace=trace)
    checks = [(e["check"], e["action"], e["detail"][:14]) for e in read_trace(tmp_path / "trace.jsonl")[0]
              if e.get("event") == "ask_check"]
    assert checks == [("empty_result", "sent_back", "@1: no rows. R"), ("empty_result", "sent_back", "@1 unchanged: ")]
    # With no request left, "nothing matches" is the answer, backed by the empty result.
    result, cursor = replay("v979_nothing_matches_on_the_unchanged_query", tmp_path / "cache2",
                            limits=AskLimits(max_requests=3))
    assert (cursor.served, cursor.missing, cursor.unused) == (3, 0, 0)
    assert result.answer == "There are no rows that match the given conditions." and result.backed_by_query


# -- stop 39 (ask4): the direct query whose filter or join found nothing, rewritten by the program ----------

@pytest.mark.parametrize(("name", "answer", "rewritten"), [
    # The model wrote `时间(月份) = '2022-07'` (the data: '2022年07月'), a count of 0, then wrote it twice more
    # and answered `@1`. The question linking found the month in that column: the program puts it in.
    ("v2854_a_month_written_otherwise", "地块数量: 4", "时间(月份) = '2022-07' → '2022年07月'"),
    # The model joined a land parcel's name to a housing project's name (0 rows) and kept the join in
    # every repair; each table has rows for its own filters, so the program drops the join.
    ("v1800_a_join_that_pairs_nothing", "集团开发商: 华润置地有限公司", "the join left out"),
])
def test_a_direct_query_that_found_nothing_is_rewritten_by_the_program_and_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, answer: str, rewritten: str) -> None:
    result, server = ask_cli(name, tmp_path, monkeypatch, "--json", direct=True)
    record = json.loads(result.stdout)
    assert (record["answer"], record["path"], len(server.requests)) == (answer, "direct", 1)
    assert any(rewritten in note for note in record["notes"])
