"""The analyst's answer checks (ask/checks.py) against the scripted model, one test per shape of
issue 35's transcripts: an answer with no query behind it, a list read off a sample, a list retyped
with rows and columns dropped, an empty result answered "nothing matches"; and {DATA} fills that
stay bounded whatever the result's size. tests/test_ask_real_model.py replays what the real model did."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from datasolver.ask import Analyst, AskConfig, AskLimits, open_package
from datasolver.ask.checks import NO_QUERY_NOTE, UNBACKED_MARK
from datasolver.data.asked_items import names_column
from datasolver.data.question_shape import asked_count, asks_for_many
from datasolver.ask.coverage import coverage, numbers_in, stray_values
from datasolver.ask.render import answer_data
from datasolver.data import QueryResult
from datasolver.llm import LLMClient, LLMSettings
from datasolver.llm.fake import ScriptedModel, text, tool_call

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

BUSINESSES = ["Acme Bakery", "Blue Door Cafe", "Corner Books", "Delta Hardware", "Evergreen Florist",
              "Fjord Fish Market", "Golden Noodle"]
CITIES = [("Tokyo", 37400068), ("Delhi", 28514000), ("Shanghai", 25582000), ("Sao Paulo", 21650000),
          ("Mexico City", 21581000), ("Los Angeles", 3990456), ("Houston", 2325502)]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ask_checks")
    (folder / "profits.csv").write_text(
        "company,year,profit\nNorthwind,2021,120.5\nNorthwind,2022,80.25\nContoso,2021,95.0\nContoso,2022,101.75\n",
        encoding="utf-8")
    (folder / "businesses.csv").write_text(
        "name,city\n" + "".join(f"{n},{'Lyon' if i % 2 else 'Paris'}\n" for i, n in enumerate(reversed(BUSINESSES))),
        encoding="utf-8")
    (folder / "cities.csv").write_text("city,population\n" + "".join(f"{c},{p}\n" for c, p in CITIES),
                                       encoding="utf-8")
    (folder / "房价.csv").write_text(
        "项目名称,区域,月份,成交均价\n天越公馆,越秀区,2019-12,95697.53\n天越公馆,越秀区,2019-11,94210.00\n"
        "东山雅筑,越秀区,2019-12,88120.10\n", encoding="utf-8")
    return folder


def ask(data: Path, script, question: str, limits: AskLimits | None = None):
    with ScriptedModel(script) as server, open_package(data, cache_dir=data.parent / "cache") as package:
        async def main():
            settings = LLMSettings(**server.connection(), api_key=None, model="fake", max_retries=0)
            async with LLMClient(settings) as client:
                return await Analyst(package, client, AskConfig(limits=limits or AskLimits(), direct_answer=False)).ask(question)

        result = asyncio.run(main())
        assert not server.errors, server.errors
        return result, server.requests


def checks_of(result) -> list[tuple[str, str]]:
    return [(e.check, e.action) for e in result.checks]


# -- 1. no answer without evidence -------------------------------------------------------------------

LOWER = "Which of Northwind or Contoso had the lower profit in 2022?"


def test_an_answer_with_no_query_is_sent_back_once_to_query_first(data: Path) -> None:
    # The transcript: one request, no query, the wrong company.
    script = [text("Contoso"),
              tool_call("query", {"sql": "SELECT company, profit FROM profits WHERE year = 2022 ORDER BY profit"}),
              tool_call("final_answer", {"answer": "Northwind", "evidence": ["@1"]})]
    result, requests = ask(data, script, LOWER)
    back = requests[1]["messages"][-1]
    assert back["role"] == "user" and back["content"].startswith(
        "No stored result backs your answer: nothing has been queried yet. Column lists and sample rows")
    assert (result.answer, result.backed_by_query, result.unbacked) == ("Northwind", True, None)
    # "which of A or B" asks for one: naming one of the two rows is the answer, not a list cut short.
    assert checks_of(result) == [("no_result", "sent_back")]


def test_answered_again_without_a_query_it_is_given_marked_never_as_if_backed(data: Path) -> None:
    result, requests = ask(data, [text("Contoso"), text("Contoso")], LOWER)
    assert len(requests) == 2
    assert result.answer == f"{UNBACKED_MARK} Contoso"
    assert (result.backed_by_query, result.unbacked) == (False, NO_QUERY_NOTE)
    record = result.to_record()
    assert record["answer"].startswith(UNBACKED_MARK) and record["backed_by_query"] is False
    assert checks_of(result) == [("no_result", "sent_back"), ("no_result", "unbacked")]


def test_samples_are_marked_as_samples_where_the_model_sees_them(data: Path) -> None:
    script = [tool_call("describe_table", {"table": "businesses"}),
              tool_call("query", {"sql": "SELECT name FROM businesses ORDER BY name"}),
              tool_call("query", {"sql": "SELECT name FROM businesses ORDER BY name LIMIT 2"}),
              tool_call("final_answer", {"answer": "{DATA}", "data": "@1"})]
    _, requests = ask(data, script, "Names of the businesses, ordered alphabetically")
    described, seven, two = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"][:3]
    assert described.endswith("(sample rows show the format, not the data: query the table for the answer)")
    assert "first 3 of 7 rows (truncated: a sample, not the data; render @1 to read them):" in seven
    assert "all 2 rows:" in two
    assert "samples that show the format, not the data: never answer from them" in requests[0]["messages"][0]["content"]


def test_numbers_no_stored_result_holds_are_sent_back_then_marked(data: Path) -> None:
    script = [tool_call("query", {"sql": "SELECT sum(profit) AS total FROM profits WHERE company = 'Northwind'"}),
              tool_call("final_answer", {"answer": "Northwind made 41% of its profit in 2022", "evidence": ["@1"]}),
              tool_call("final_answer", {"answer": "Northwind made 41% of its profit in 2022", "evidence": ["@1"]})]
    result, requests = ask(data, script, "What share of Northwind's profit came in 2022?")
    back = requests[2]["messages"][-1]["content"]
    assert back.startswith("These values of your answer are in no stored result: 41%. Answer only from the stored "
                           "results")
    assert back.endswith('If @1 (1 rows: total) answers the question, copy this call: final_answer '
                         '{"answer": "{DATA}", "data": "@1"}')
    assert result.answer == f"{UNBACKED_MARK} Northwind made 41% of its profit in 2022"
    assert result.unbacked == "no stored result holds 41% of this answer" and not result.backed_by_query


def test_a_reply_of_empty_tool_call_markup_is_no_answer(data: Path) -> None:
    # The real model, after a send-back, replied `<tools>\n\n</tools>\n`: it was taken as the answer.
    script = [tool_call("query", {"sql": "SELECT name FROM businesses ORDER BY name"}), text("<tools>\n\n</tools>\n"),
              tool_call("final_answer", {"answer": "{DATA}", "data": "@1"})]
    result, requests = ask(data, script, "Names of the businesses, ordered alphabetically")
    assert requests[2]["messages"][-1]["content"].startswith("Your reply had no answer.")
    assert result.answer == ", ".join(BUSINESSES)


# -- 2. the program writes what the result holds ------------------------------------------------------

def test_a_list_read_off_the_sample_then_retyped_short_is_written_whole_from_the_result(data: Path) -> None:
    # The transcript: 3 of 7 names read off a preview, no query. Sent back, the model queries (7 rows)
    # and again types 3 of them: the program writes the 7.
    question = "Names of the businesses, ordered alphabetically"
    script = [text("Acme Bakery, Blue Door Cafe, Corner Books"),
              tool_call("query", {"sql": "SELECT name FROM businesses ORDER BY name"}),
              tool_call("final_answer", {"answer": "Acme Bakery, Blue Door Cafe, Corner Books", "evidence": ["@1"]})]
    result, _ = ask(data, script, question)
    assert result.answer == ", ".join(BUSINESSES)
    assert (result.template, result.backed_by_query) == ("{DATA}", True)
    assert checks_of(result) == [("no_result", "sent_back"), ("partial_list", "rewrote")]
    assert result.checks[-1].detail == "the answer named 3 of 7 rows of @1; written from @1 (name)"


def test_top_five_retyped_as_three_names_without_the_populations_is_written_from_the_result(data: Path) -> None:
    # The transcript: exactly the right query (@1, 5 rows), then "Los Angeles, Sao Paulo, Houston".
    question = "What are the top 5 cities by population, with the population?"
    script = [tool_call("query", {"sql": "SELECT city, population FROM cities ORDER BY population DESC LIMIT 5"}),
              tool_call("final_answer", {"answer": "Tokyo, Delhi, Shanghai", "evidence": ["@1"]})]
    result, _ = ask(data, script, question)
    assert result.answer == ("Tokyo (37400068), Delhi (28514000), Shanghai (25582000), Sao Paulo (21650000), "
                             "Mexico City (21581000)")
    assert result.checks[-1].detail == ("the answer named 3 of 5 rows of @1 and not its column population; "
                                        "written from @1 (city, population)")


def test_a_whole_list_is_kept_as_the_model_wrote_it_and_a_singular_question_is_never_filled(data: Path) -> None:
    whole = [tool_call("query", {"sql": "SELECT city, population FROM cities ORDER BY population DESC LIMIT 2"}),
             tool_call("final_answer", {"answer": "Tokyo 37,400,068 and Delhi 28,514,000"})]
    result, _ = ask(data, whole, "What are the two largest cities, with their population?")
    assert result.answer == "Tokyo 37,400,068 and Delhi 28,514,000" and result.checks == []
    largest = [tool_call("query", {"sql": "SELECT city FROM cities ORDER BY population DESC"}),
               tool_call("final_answer", {"answer": "Tokyo"})]
    result, _ = ask(data, largest, "Which city has the largest population?")
    assert result.answer == "Tokyo" and result.checks == []
    top3 = [tool_call("query", {"sql": "SELECT city FROM cities ORDER BY population DESC"}),
            tool_call("final_answer", {"answer": "Tokyo, Delhi, Shanghai"})]
    result, _ = ask(data, top3, "What are the top 3 cities by population?")  # the model cut the 7 rows to 3
    assert result.answer == "Tokyo, Delhi, Shanghai" and result.checks == []


def test_data_fills_are_capped_in_rows_and_characters_and_say_the_list_was_cut(data: Path) -> None:
    # Issue 33: a {DATA} template over a 20,000,000-row result fetched every row (3 GB). Now the
    # program fetches at most `data_rows` rows and says how many it left out.
    fetched: list[int] = []
    script = [tool_call("query", {"sql": "SELECT range AS n FROM range(20000000)"}),
              tool_call("final_answer", {"answer": "The numbers: {DATA}", "data": "@1"})]
    with ScriptedModel(script) as server, open_package(data, cache_dir=data.parent / "cache") as package:
        original = package.catalog.query

        def spying(sql, limit=50, timeout_s=None):
            fetched.append(limit)
            if limit > 10_000:
                raise AssertionError(f"fetched {limit:,} rows for an answer")
            return original(sql, limit, timeout_s)

        package.catalog.query = spying  # type: ignore[method-assign]

        async def main():
            settings = LLMSettings(**server.connection(), api_key=None, model="fake", max_retries=0)
            async with LLMClient(settings) as client:
                return await Analyst(package, client, AskConfig(direct_answer=False)).ask("List the numbers.")

        result = asyncio.run(main())
    assert max(fetched) == AskLimits().data_rows == 500
    assert result.answer.startswith("The numbers: 0, 1, 2, ")
    assert result.answer.endswith(", 499 … and 19,999,500 more (the list was cut at 500 rows)")
    wide = QueryResult(["t"], ["VARCHAR"], [("x" * 30,)] * 10, 10)
    assert answer_data(wide, max_chars=70) == f"{'x' * 30}, {'x' * 30} … and 8 more (the list was cut at 70 characters)"
    assert answer_data(QueryResult(["t"], ["VARCHAR"], [("y" * 100,)], 1), max_chars=10) == (
        "yyyyyyyyy… (cut at 10 characters)")


# -- 3. empty results re-checked -----------------------------------------------------------------------

def test_an_empty_result_answered_nothing_matches_is_sent_back_with_the_filter_and_nearest_values(data: Path) -> None:
    # The transcript: the wrong column for the project name, 0 rows, "nothing matches".
    question = "请问2019年12月，广州市越秀区天越公馆的成交均价是多少？"
    script = [tool_call("query", {"sql": "SELECT 成交均价 FROM 房价 WHERE 区域 = '天越公馆' AND 月份 = '2019-12'"}),
              tool_call("final_answer", {"answer": "没有匹配的数据", "evidence": ["@1"]}),
              tool_call("query", {"sql": "SELECT 成交均价 FROM 房价 WHERE 项目名称 = '天越公馆' AND 月份 = '2019-12'"}),
              tool_call("final_answer", {"answer": "95697.53", "evidence": ["@2"]})]
    result, requests = ask(data, script, question)
    back = requests[2]["messages"][-1]["content"]
    assert back.startswith("Your answer rests on @1: no rows. Re-run without each filter: without `区域 = '天越公馆'`: "
                           "2 rows (nearest existing values: '越秀区'); without `月份 = '2019-12'`: 0 rows.")
    assert back.endswith("Answer that nothing matches only if the corrected query still finds nothing.")
    assert (result.answer, result.backed_by_query) == ("95697.53", True)
    assert checks_of(result) == [("empty_result", "sent_back")]


def test_after_the_send_back_nothing_matches_may_be_the_answer_when_no_request_is_left(data: Path) -> None:
    script = [tool_call("query", {"sql": "SELECT 成交均价 FROM 房价 WHERE 项目名称 = '不存在'"}),
              tool_call("final_answer", {"answer": "没有匹配的数据"}),
              tool_call("final_answer", {"answer": "没有匹配的数据"})]
    result, requests = ask(data, script, "不存在小区的成交均价是多少？", limits=AskLimits(max_requests=3))
    assert len(requests) == 3 and result.answer == "没有匹配的数据" and result.backed_by_query


# -- the parts ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("question", "many", "count"), [
    ("Which of Northwind or Contoso had the lower profit in 2022?", False, None),
    ("Names of the businesses, ordered alphabetically", True, None),
    ("What are the top 5 cities by population, with the population?", True, 5),
    ("请问北京市顺义区的诺德阅墅与悦境这两个小区的绿化率各为多少？", True, None),
    ("What is the ratio of papers published in the year 2020 to the total number of papers?", False, None),
    ("Get the cities in the United States and their population", True, None),
    ("请问武汉市武昌区的武汉长江中心是由哪家公司开发的？", False, None),
    ("请问在2022年7月，南京市建邺区共成交了多少地块？", False, None),
    ("Which restaurants in Paris have a rating above 4?", True, None),
    ("Which city has the most people?", False, None),
    ("列出销售额前3名的城市", True, 3),
    ("What is the top 1 city?", False, 1),
])
def test_what_a_question_asks_for(question: str, many: bool, count: int | None) -> None:
    assert (asks_for_many(question), asked_count(question)) == (many, count)


def test_columns_a_question_names() -> None:
    assert names_column("top 5 cities, with the population", "population")
    assert names_column("the number of references cited", "num_references")
    assert names_column("绿化率各为多少", "绿化率(%)")
    assert names_column("the cities and their sizes", "city_name")
    assert not names_column("the cities", "id") and not names_column("the cities", "population")


def test_numbers_are_matched_as_people_write_them() -> None:
    assert [n.text for n in numbers_in("m2 Q3 1.5B 30 % is 4. 2020-2021 ２０１９年 1,234.5")] == [
        "30 %", "4", "2020", "2021", "2019", "1,234.5"]
    ratio = QueryResult(["ratio"], ["DOUBLE"], [(1 / 3,)], 1)
    for written in ("0.33", "0.3333", "33.33%", "33.3 %"):
        assert stray_values(f"The ratio is {written}", "ratio?", [ratio]) == [], written
    assert stray_values("The ratio is 0.35", "ratio?", [ratio]) == ["0.35"]
    assert stray_values("4 restaurants", "rating above 4?", []) == []  # the question's own number
    assert stray_values("above 1000: none", "?", [], sql=["SELECT * FROM t WHERE x > 1000"]) == []
    cities = QueryResult(["city", "population"], ["VARCHAR", "BIGINT"], CITIES, 7)
    assert stray_values("Tokyo (37,400,068), Paris", "?", [cities]) == ["paris"]
    named = coverage("Los Angeles, Sao Paulo and Houston", cities)
    assert (named.rows_named, named.columns_named) == ((3, 5, 6), ("city",))


def test_a_lead_in_that_restates_the_question_is_neither_an_item_nor_kept(data: Path) -> None:
    # The real model (task_en_academic_7) wrote "The titles of the publications that have the highest
    # number of references cited, ordered by … are: A, B, C": the lead-in was taken for a list item that
    # no result holds, and sent back.
    question = "What are the names of the businesses in Paris, ordered alphabetically?"
    script = [tool_call("query", {"sql": "SELECT name FROM businesses WHERE city = 'Paris' ORDER BY name"}),
              tool_call("final_answer", {"answer": "The names of the businesses in Paris, ordered alphabetically, "
                                                   "are: Acme Bakery, Corner Books, Evergreen Florist, Golden Noodle",
                                         "evidence": ["@1"]})]
    result, _ = ask(data, script, question)
    assert result.answer == "Acme Bakery, Corner Books, Evergreen Florist, Golden Noodle" and result.checks == []


@pytest.mark.parametrize(("answer", "question", "kept"), [
    ("The cities in the United States are: New York, Chicago.", "Get the cities in the United States and their "
     "population", "New York, Chicago."),
    ("请问天越公馆的成交均价是：95697.53元", "请问2019年12月，广州市越秀区天越公馆的成交均价是多少？", "95697.53元"),
    ("Ratio: 0.6", "What is the ratio?", "Ratio: 0.6"),  # too short to be a restated question
    ("Note that prices vary: 12 t", "What is the price?", "Note that prices vary: 12 t"),  # not the question's words
])
def test_a_restated_question_lead_in_is_dropped(answer: str, question: str, kept: str) -> None:
    from datasolver.ask.answer import drop_restated_lead

    assert drop_restated_lead(answer, question) == kept


def test_a_list_of_the_questions_own_words_is_no_answer_from_the_data() -> None:
    # The real model (task_en_restaurants_24) answered "The regions are: Los Angeles, Los Angeles." to
    # "What are the names of the restaurants in Los Angeles …" with the two right names in @1.
    names = QueryResult(["name"], ["VARCHAR"], [("The Pasta House",), ("The Sushi Bar",)], 2)
    question = "What are the names of the restaurants in Los Angeles that have a rating higher than 4?"
    assert stray_values("The regions are: Los Angeles, Los Angeles.", question, [names]) == ["los angeles"]
    assert stray_values("The Pasta House, The Sushi Bar", question, [names]) == []


def test_one_name_alone_must_be_in_a_result_that_holds_names() -> None:
    profits = QueryResult(["company", "profit"], ["VARCHAR", "DOUBLE"], [("Northwind", 80.25), ("Contoso", 101.75)], 2)
    count = QueryResult(["n"], ["BIGINT"], [(0,)], 1)
    question = "Which of Northwind or Contoso had the lower profit in 2022?"
    assert stray_values("Northwind", question, [profits]) == []
    assert stray_values("Northwind had the lower profit.", question, [profits]) == []
    assert stray_values("Fabrikam", question, [profits]) == ["fabrikam"]
    assert stray_values("Fabrikam", question, [count]) == []  # nothing to compare a name with
    assert stray_values("No, none of them.", question, [profits]) == []
    assert stray_values("Northwind: 80.25", question, [profits]) == []


@pytest.mark.parametrize(("answer", "why"), [
    ("{}", "`{}` says nothing"), ("[ ]", "`[ ]` says nothing"), ("None", "`None` says nothing"),
    ("null", "`null` says nothing"), ("  ", "it is empty"), ("<tool_call>\n</tool_call>", "it is empty"),
    ("No stored result backs your answer: nothing has been queried yet.",
     "it repeats what we sent you: `No stored result backs your answer: noth`"),
    ("North", None), ("0", None), ("None of the regions", None),
    # the nearest values a send-back showed may be the answer: only our text's opening is an echo
    ("2022年07月, 2022年10月 are the months", None),
])
def test_what_is_no_answer(answer: str, why: str | None) -> None:
    from datasolver.ask.checks import non_answer

    ours = ["No stored result backs your answer: nothing has been queried yet. Run query first.",
            "Your answer rests on @1: no rows. Nearest existing values: '2022年07月, 2022年10月 are the months'"]
    assert non_answer(answer, ours) == why


def test_the_analysts_checks_are_a_named_table_in_order_and_docs_ask_lists_each() -> None:
    from typing import get_args

    from datasolver.ask.checks import ASK_CHECKS, CheckName

    names = [name for name, _ in ASK_CHECKS]
    assert names == ["non_answer", "no_result", "empty_result", "stray_values", "partial_list"]
    assert set(names) == set(get_args(CheckName))
    assert all(check.__name__ == f"check_{name}" for name, check in ASK_CHECKS)
    doc = (Path(__file__).resolve().parents[1] / "docs" / "ask.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1].strip().strip("`") for line in doc.splitlines() if line.startswith("| `")]
    assert [row for row in rows if row in names] == names
