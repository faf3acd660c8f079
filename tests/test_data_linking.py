"""Question linking (data/linking.py): literals, the value index and the links, with no model."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.data import Catalog
from datasolver.data.linking import ValueIndex, date_mentions, link_question, question_literals
from tests.helpers.datafiles import sqlite_file, write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

PRICE_COLUMNS = "项目名称,成交均价,集团开发商\n"


@pytest.mark.parametrize("text, expected", [
    ("2021年8月和2019年12月", [("month", "2021-08"), ("month", "2019-12")]),
    ("2019年至2022年每年", [("years", "2019..2022")]),
    ("between 2019 and 2022", [("years", "2019..2022")]),
    ("from 2019 to 2021", [("years", "2019..2021")]),
    ("sales in Q3 2020", [("quarter", "Q3 2020")]),
    ("2020年第三季度", [("quarter", "2020年第三季度")]),
    ("in March 2021", [("month", "2021-03")]),
    ("FY2022 revenue", [("fiscal", "FY2022")]),
    ("on 2021-03-05", [("month", "2021-03")]),
    ("in 2023", [("year", "2023")]),
    ("order 12345 of 1,200 units", []),
])
def test_dates_are_read_in_the_forms_people_write_them(text: str, expected: list) -> None:
    assert [(d.kind, d.label) for d in date_mentions(text)] == expected


def test_quarter_and_year_ranges_cover_their_months_and_years() -> None:
    (quarter,) = date_mentions("Q3 2020")
    assert quarter.months == ("2020-07", "2020-08", "2020-09")
    (years,) = date_mentions("2019年至2022年")
    assert years.years == ("2019", "2020", "2021", "2022")


def test_question_literals_are_quoted_strings_dates_names_and_numbers() -> None:
    literals = question_literals('Which customers from "Lyon" ordered more than 3 items in March 2021 at Le Petit Bistro?')
    found = {(lit.kind, lit.text) for lit in literals}
    assert {("quoted", "Lyon"), ("month", "March 2021"), ("name", "Le Petit Bistro"), ("number", "3")} <= found
    assert ("name", "March") not in found and ("name", "Which") not in found


@pytest.fixture()
def lookalike_task(tmp_path: Path) -> Path:
    """The transcript of issue 31: three monthly price tables of one district (two CSV, one in a
    SQLite file), a land table, and the question naming the district, a project and two months."""
    rows_2019_04 = PRICE_COLUMNS + "华润置地未来城市,41000,华润置地\n龙湖天街,39000,龙湖集团\n"
    rows_2019_12 = PRICE_COLUMNS + "华润置地未来城市,42500,华润置地\n首开国风,38000,首开股份\n"
    db = sqlite_file({
        "北京市昌平区2021年08月商品房成交价格表": (
            "项目名称 TEXT, 成交均价 REAL, 集团开发商 TEXT",
            [("华润置地未来城市", 45000.0, "华润置地"), ("万科未来城", 43000.0, "万科")]),
        "上海市浦东新区2021年08月商品房成交价格表": (
            "项目名称 TEXT, 成交均价 REAL, 集团开发商 TEXT", [("前滩公馆", 120000.0, "陆家嘴")]),
    })
    return write_task(tmp_path, "task_lookalike",
                      "请问北京市昌平区的华润置地未来城市在2021年8月和2019年12月的成交均价分别是多少？",
                      files={
                          "csv/北京市昌平区2019年04月商品房成交价格表.csv": rows_2019_04,
                          "csv/北京市昌平区2019年12月商品房成交价格表.csv": rows_2019_12,
                          "csv/北京市昌平区土地成交信息表.csv": "地块名称,成交价(万元),时间(月份)\n昌平01,1000,2019年12月\n",
                          "db/价格查询.db": db,
                      })


def test_the_tables_whose_names_carry_the_asked_months_lead_and_the_other_month_is_a_lookalike(
        lookalike_task: Path) -> None:
    with Catalog.open(lookalike_task) as catalog:
        links = link_question(catalog, "请问北京市昌平区的华润置地未来城市在2021年8月和2019年12月的成交均价分别是多少？")
    assert set(links.top(2)) == {"北京市昌平区2021年08月商品房成交价格表", "北京市昌平区2019年12月商品房成交价格表"}
    assert "北京市昌平区2019年04月商品房成交价格表" in links.lookalikes
    assert "上海市浦东新区2021年08月商品房成交价格表" in links.lookalikes
    assert "北京市昌平区2019年04月商品房成交价格表" not in links.linked()
    hits = {(h.table, h.column, h.value) for h in links.values}
    assert ("北京市昌平区2021年08月商品房成交价格表", "项目名称", "华润置地未来城市") in hits


def test_the_rendered_links_say_what_matched_and_where(lookalike_task: Path) -> None:
    with Catalog.open(lookalike_task) as catalog:
        text = link_question(catalog, "请问北京市昌平区的华润置地未来城市在2021年8月和2019年12月的成交均价分别是多少？").render()
    first = text.splitlines()[1]
    assert first.startswith("- table 北京市昌平区20")
    assert "its name says 20" in first and "昌平区" in first
    assert "column 项目名称 has the value '华润置地未来城市'" in first
    assert "column 成交均价" in text  # the question uses the column's name
    assert text.splitlines()[-1].startswith("- look-alike tables") and "2019年04月" in text.splitlines()[-1]


def test_a_month_written_otherwise_finds_the_same_month_in_a_text_column(lookalike_task: Path) -> None:
    with Catalog.open(lookalike_task) as catalog:
        links = link_question(catalog, "昌平区2019年12月成交了多少地块？")
    hits = [h for h in links.values if h.table == "北京市昌平区土地成交信息表"]
    assert [(h.column, h.value, h.how) for h in hits] == [("时间(月份)", "2019年12月", "exact")]
    with Catalog.open(lookalike_task) as catalog:
        links = link_question(catalog, "昌平区2019-12成交了多少地块？")
    assert ("时间(月份)", "2019年12月", "same month") in {(h.column, h.value, h.how) for h in links.values}


def test_latin_values_match_whole_words_and_near_spellings(tmp_path: Path) -> None:
    task = write_task(tmp_path, "task_cities", "What is the population of Sao Paulo and of Lyon?", files={
        "csv/city.csv": "name,country,population\nSão Paulo,Brazil,12300000\nLyon,France,513000\nLyonnais,France,1\n",
        "csv/country.csv": "code,name\nBR,Brazil\nFR,France\n",
    })
    with Catalog.open(task) as catalog:
        links = link_question(catalog, "What is the population of Sao Paulo and of Lyon?")
    values = {(h.value, h.how.split()[0]) for h in links.values}
    assert ("Lyon", "exact") in values and ("São Paulo", "exact") not in values
    assert any(v == "São Paulo" and how == "near" for v, how in values)
    assert ("Lyonnais", "exact") not in values  # inside a word: no match
    assert links.top(1) == ["city"]


def test_a_one_word_table_name_made_of_question_words_and_a_bridge_table_rank_high(tmp_path: Path) -> None:
    task = write_task(tmp_path, "task_papers", "Which authors wrote papers with the keyphrase 'deep learning'?", files={
        "csv/author.csv": "authorid,authorname\n1,Ann\n2,Bob\n",
        "csv/paper.csv": "paperid,title\n10,On nets\n11,On trees\n",
        "csv/writes.csv": "paperid,authorid\n10,1\n11,2\n",
        "csv/keyphrase.csv": "keyphraseid,keyphrasename\n5,deep learning\n",
        "csv/paperkeyphrase.csv": "paperid,keyphraseid\n10,5\n",
        "csv/venue.csv": "venueid,venuename\n1,NeurIPS\n",
    })
    with Catalog.open(task) as catalog:
        links = link_question(catalog, "Which authors wrote papers with the keyphrase 'deep learning'?")
    ranked = [t.name for t in links.tables]
    assert ranked.index("paperkeyphrase") < ranked.index("venue")
    assert set(ranked[:5]) == {"author", "paper", "writes", "keyphrase", "paperkeyphrase"}
    assert any("joins" in r for t in links.tables for r in t.reasons)


def test_knowledge_md_meanings_link_a_chinese_question_to_english_columns(tmp_path: Path) -> None:
    knowledge = ("# 数据说明\n\n### 表 `e_customers`\n\n| 列名 | 类型 | 释义 |\n|---|---|---|\n"
                 "| CustomerID | 整数 | 客户ID |\n| City | 文本 | 城市 |\n\n"
                 "### 表 `e_orders`\n\n| 列名 | 类型 | 释义 |\n|---|---|---|\n| OrderID | 整数 | 订单ID |\n"
                 "| TotalAmount | 小数 | 订单金额 |\n\n### 表 `stores`\n\n| 列名 | 类型 | 释义 |\n|---|---|---|\n"
                 "| StoreID | 整数 | 门店ID |\n| Region | 文本 | 区域 |\n")
    task = write_task(tmp_path, "task_kn", "各城市客户的订单金额是多少？", files={
        "knowledge.md": knowledge,
        "csv/e_customers.csv": "CustomerID,City\n1,Rabat\n",
        "csv/e_orders.csv": "OrderID,CustomerID,TotalAmount\n7,1,9.5\n",
        "csv/stores.csv": "StoreID,Region\n1,North\n",
    })
    with Catalog.open(task) as catalog:
        links = link_question(catalog, "各城市客户的订单金额是多少？", knowledge=knowledge)
    assert set(links.top(2)) == {"e_customers", "e_orders"}
    assert ("e_customers", "City") in links.columns and ("e_orders", "TotalAmount") in links.columns


def test_the_value_index_is_bounded_and_says_so(tmp_path: Path) -> None:
    rows = "code\n" + "".join(f"value{i:05d}\n" for i in range(300))
    task = write_task(tmp_path, "task_big", "Which code?", files={"csv/a.csv": rows, "csv/b.csv": rows})
    with Catalog.open(task) as catalog:
        index = ValueIndex.build(catalog, per_column=50, total=80)
    assert index.size == 80
    assert any("value cap (80) reached" in note for note in index.notes)
    with Catalog.open(task) as catalog:
        assert catalog.value_index() is catalog.value_index()  # built once per catalog


def test_a_column_named_with_an_abbreviation_is_linked_by_the_word(tmp_path: Path) -> None:
    # "the number of references" names `reference_num`, not the `cite` table's `cited` (a dev-en question
    # the real 1.5B model answered by counting citations received).
    question = "What are the top 3 titles of the publications with the highest number of references cited?"
    task = write_task(tmp_path, "task_refs", question, files={
        "csv/publication.csv": "pid,title,reference_num,citation_num\n1,A,5,4\n2,B,8,2\n",
        "csv/cite.csv": "cited,citing\n1,2\n",
    })
    with Catalog.open(task) as catalog:
        links = link_question(catalog, question)
    assert ("publication", "reference_num") in links.columns
    assert ("publication", "citation_num") not in links.columns  # "citation" is not in the question
    assert "- table publication: its name shares publication; the question uses column title, reference_num" \
        in links.render()  # "titles" names `title` too (the stems "titl" and "title" compared without the e)


def test_a_question_word_inside_one_column_name_links_that_column_and_its_table_leads(tmp_path: Path) -> None:
    # "由哪家公司开发" asks for 集团开发商 (the developer), not the land table's 所属集团 (the buyer of the
    # land): a dev question the real 1.5B model answered from the land table, listed first on a tie.
    question = "请问武汉市武昌区的武汉长江中心是由哪家公司开发的？"
    task = write_task(tmp_path, "task_dev", question, files={
        "csv/武汉市武昌区土地成交信息表.csv": "项目名称,所属集团,成交日期,成交总价\n武汉长江中心,华夏幸福,2020年12月31日,9\n",
        "csv/武汉市武昌区2022年07月商品房成交价格表.csv": PRICE_COLUMNS + "武汉长江中心,40000,华润置地\n",
        "csv/武汉市江汉区2022年07月商品房成交价格表.csv": PRICE_COLUMNS + "江汉一号,30000,万科\n",
    })
    with Catalog.open(task) as catalog:
        links = link_question(catalog, question)
    assert links.top(1) == ["武汉市武昌区2022年07月商品房成交价格表"]
    assert ("武汉市武昌区2022年07月商品房成交价格表", "集团开发商") in links.columns
    assert ("武汉市武昌区土地成交信息表", "所属集团") not in links.columns
    assert {(c, run) for _, c, run in links.column_parts} == {("集团开发商", "开发")}
    assert "column 集团开发商 has the question's 开发 in its name" in links.render().splitlines()[1]
    # a word inside several column names links none of them (成交 is in 成交均价, 成交日期, 成交总价)
    with Catalog.open(task) as catalog:
        links = link_question(catalog, "武汉长江中心何时成交？")
    assert not [c for t, c in links.columns if c.startswith("成交")]
    # a word of a name's form links nothing: "所属地块" is not a question about 所属集团
    with Catalog.open(task) as catalog:
        links = link_question(catalog, "武汉长江中心所属地块的成交总价是多少？")
    assert "所属集团" not in {c for _, c in links.columns}


def test_respell_filters_puts_in_the_one_value_the_linking_found_in_that_column() -> None:
    from datasolver.data.linking import QuestionLinks, ValueHit, respell_filters

    month = ValueHit("land", "时间(月份)", "2022年07月", "2022年7月", "same month")
    links = QuestionLinks("q", values=(month,))
    assert respell_filters("SELECT count(*) FROM land AS t WHERE t.\"时间(月份)\" IN ('2022-07') AND k = 'a'", links) == (
        "SELECT COUNT(*) FROM land AS t WHERE t.\"时间(月份)\" IN ('2022年07月') AND k = 'a'",
        ["时间(月份) = '2022-07' → '2022年07月'"])
    assert respell_filters("SELECT count(*) FROM land WHERE \"时间(月份)\" = '2022年07月'", links) is None  # as found
    assert respell_filters("SELECT count(*) FROM other WHERE \"时间(月份)\" = '2022-07'", links) is None  # not its table
    two = QuestionLinks("q", values=(month, ValueHit("land", "时间(月份)", "2019年12月", "2019年12月", "exact")))
    assert respell_filters("SELECT count(*) FROM land WHERE \"时间(月份)\" = '2022-07'", two) is None  # which one: a guess
    assert respell_filters("SELECT count(*) FROM land WHERE (", links) is None
