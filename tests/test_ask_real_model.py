"""What the real small model did with `datasolver ask` on the benchmark's tasks, pinned by replaying
its recorded replies (tests/fixtures/ask_real_model_replies.json, from benchmarks/real_model.py
--harness ask): real models in benchmarks, their recorded replies in tests. Each replay must use
every recorded reply and ask for no other; the task's data comes from ../shared/tasks (skipped
where absent)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.askreplay import replay


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
