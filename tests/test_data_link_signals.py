"""Linking's signals (data/rules/link_signals.py): the ranks and scores of general examples pinned, each
signal on its own example, and every signal named, weighted, documented and listed in docs/rules.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.data import Catalog
from datasolver.data.linking import link_question
from datasolver.data.rules.link_signals import (LINK_SIGNALS, FoundValue, LinkHit, QuestionFacts, TableFacts, column_named,
                                                knowledge_text, month_in_name, name_terms, other_period, signal_hits,
                                                signal_reasons, signal_score, value_found, year_in_name)
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"

PRICES = "项目名称,成交均价,集团开发商\n"
SHOP_KNOWLEDGE = ("# Shop data\n\n## Table `t_moves`\n\nEvery shipment leaving the warehouse, one row per parcel.\n\n"
                  "## Table `t_people`\n\nStaff of the shop and their roles.\n\n"
                  "## Table `t_stock`\n\nWhat the shelves hold at the end of each day.\n")

# name: (question, files, knowledge) — general examples, never a benchmark task
CASES: dict[str, tuple[str, dict[str, str], str]] = {
    "months in CJK table names": ("北京市昌平区2021年8月龙湖天街的成交均价是多少？", {
        "csv/北京市昌平区2021年08月商品房成交价格表.csv": PRICES + "龙湖天街,39000,龙湖集团\n首开国风,38000,首开股份\n",
        "csv/北京市昌平区2019年12月商品房成交价格表.csv": PRICES + "龙湖天街,35000,龙湖集团\n",
        "csv/北京市海淀区2021年08月商品房成交价格表.csv": PRICES + "西山壹号,90000,华润置地\n",
        "csv/北京市昌平区土地成交信息表.csv": "地块名称,成交价(万元),时间(月份)\n昌平01,1000,2021年08月\n",
    }, ""),
    "a month against yearly and monthly tables": ("How many orders were shipped to Paris in March 2022?", {
        "csv/orders_2022_03.csv": "order_id,ship_city,amount\n1,Paris,5\n2,Lyon,7\n",
        "csv/orders_2022_04.csv": "order_id,ship_city,amount\n3,Paris,2\n",
        "csv/orders_2021.csv": "order_id,ship_city,amount\n4,Nice,1\n",
        "csv/customers.csv": "customer_id,name,city\n10,Ann,Paris\n",
    }, ""),
    "years in table names": ("What was the total amount of sales in the north region in 2022?", {
        "csv/sales_2021.csv": "region,amount\nnorth,5\nsouth,7\n",
        "csv/sales_2022.csv": "region,amount\nnorth,6\nsouth,9\n",
        "csv/sales_2023.csv": "region,amount\nnorth,1\n",
        "csv/staff_2022.csv": "name,salary\nann,3\n",
        "csv/regions.csv": "region,manager\nnorth,Bob\n",
    }, ""),
    "knowledge mentions": ("Which warehouse sent the most shipment parcels?", {
        "csv/t_moves.csv": "id,site,qty\n1,A,3\n",
        "csv/t_people.csv": "id,role\n1,clerk\n",
        "csv/t_stock.csv": "id,site,qty\n1,A,9\n",
    }, SHOP_KNOWLEDGE),
    "a CJK part of a column name": ("请问武汉市武昌区的武汉长江中心是由哪家公司开发的？", {
        "csv/武汉市武昌区土地成交信息表.csv": "项目名称,所属集团,成交日期,成交总价\n武汉长江中心,华夏幸福,2020年12月31日,9\n",
        "csv/武汉市武昌区2022年07月商品房成交价格表.csv": PRICES + "武汉长江中心,40000,华润置地\n",
        "csv/武汉市江汉区2022年07月商品房成交价格表.csv": PRICES + "江汉一号,30000,万科\n",
    }, ""),
    "values found exactly and nearly": ("What is the population of Sao Paulo and of Lyon?", {
        "csv/city.csv": "name,country,population\nSão Paulo,Brazil,12300000\nLyon,France,513000\n",
        "csv/country.csv": "code,name\nBR,Brazil\nFR,France\n",
        "csv/airport.csv": "code,city\nGRU,São Paulo\nLYS,Lyon\n",
    }, ""),
    "a compound table name and a bridge": ("Which authors wrote papers with the keyphrase 'deep learning'?", {
        "csv/author.csv": "authorid,authorname\n1,Ann\n2,Bob\n",
        "csv/paper.csv": "paperid,title\n10,On nets\n11,On trees\n",
        "csv/writes.csv": "paperid,authorid\n10,1\n11,2\n",
        "csv/keyphrase.csv": "keyphraseid,keyphrasename\n5,deep learning\n",
        "csv/paperkeyphrase.csv": "paperid,keyphraseid\n10,5\n",
        "csv/venue.csv": "venueid,venuename\n1,NeurIPS\n",
    }, ""),
    "ties": ("How many orders are there?", {
        "csv/shop_b_orders.csv": "order_id,amount\n1,5\n",
        "csv/shop_a_orders.csv": "order_id,amount\n2,7\n",
        "csv/customers.csv": "customer_id,city\n1,Oslo\n",
        "csv/notes.csv": "note\nhello\n",
    }, ""),
}


def linked(tmp_path: Path, case: str):
    question, files, knowledge = CASES[case]
    extra = {"knowledge.md": knowledge} if knowledge else {}
    task = write_task(tmp_path, "task_case", question, files={**files, **extra})
    with Catalog.open(task) as catalog:
        return link_question(catalog, question, knowledge=knowledge)


# case: (the tables ranked with their scores, the look-alikes, the rendered links' lines), as linking
# gave them before its scoring became named signals (the same under PYTHONHASHSEED 1 and 2)
PINNED: dict[str, tuple[list[tuple[str, float]], tuple[str, ...], list[str]]] = {
    'months in CJK table names': (
        [('北京市昌平区2021年08月商品房成交价格表', 8.542),
         ('北京市昌平区土地成交信息表', 4.542),
         ('北京市海淀区2021年08月商品房成交价格表', 4.5),
         ('北京市昌平区2019年12月商品房成交价格表', -1.0)],
        ('北京市海淀区2021年08月商品房成交价格表', '北京市昌平区2019年12月商品房成交价格表'),
        ["Matched in table names and data without a model (check before relying on it); the question's dates: 2021年8月 = 2021-08:",
         "- table 北京市昌平区2021年08月商品房成交价格表: its name says 2021-08; its name shares 北京市昌平区2021年; the question uses column 成交均价; column 项目名称 has the value '龙湖天街'",
         "- table 北京市昌平区土地成交信息表: its name shares 北京市昌平区; column 时间(月份) has the value '2021年08月' (same month to '2021年8月')",
         '- look-alike tables (same columns, nothing in the question names them): 北京市海淀区2021年08月商品房成交价格表, 北京市昌平区2019年12月商品房成交价格表']),
    'a month against yearly and monthly tables': (
        [('orders_2022_03', 6.347),
         ('customers', 1.0),
         ('orders_2021', -1.0),
         ('orders_2022_04', -1.0)],
        ('orders_2021', 'orders_2022_04'),
        ["Matched in table names and data without a model (check before relying on it); the question's dates: March 2022 = 2022-03:",
         "- table orders_2022_03: its name says 2022-03; its name shares order; the question uses column order_id; column ship_city has the value 'Paris'",
         "- table customers: column city has the value 'Paris'",
         '- look-alike tables (same columns, nothing in the question names them): orders_2021, orders_2022_04']),
    'years in table names': (
        [('sales_2022', 4.231),
         ('regions', 3.042),
         ('staff_2022', 1.5),
         ('sales_2021', -1.0),
         ('sales_2023', -1.0)],
        ('sales_2021', 'sales_2023'),
        ["Matched in table names and data without a model (check before relying on it); the question's dates: 2022:",
         "- table sales_2022: its name says 2022; its name shares sal; the question uses column region, amount; column region has the value 'north'",
         "- table regions: its name shares region; the question uses column region; column region has the value 'north'",
         '- table staff_2022: its name says 2022',
         '- look-alike tables (same columns, nothing in the question names them): sales_2021, sales_2023']),
    'knowledge mentions': (
        [('t_moves', 1.456),
         ('t_people', 0.0),
         ('t_stock', 0.0)],
        ('t_stock',),
        ['Matched in table names and data without a model (check before relying on it):',
         "- table t_moves: knowledge.md's text on it shares parcel, shipment, warehouse",
         '- look-alike tables (same columns, nothing in the question names them): t_stock']),
    'a CJK part of a column name': (
        [('武汉市武昌区2022年07月商品房成交价格表', 4.749),
         ('武汉市武昌区土地成交信息表', 4.249),
         ('武汉市江汉区2022年07月商品房成交价格表', 0.5)],
        ('武汉市江汉区2022年07月商品房成交价格表',),
        ['Matched in table names and data without a model (check before relying on it):',
         "- table 武汉市武昌区2022年07月商品房成交价格表: its name shares 武汉市武昌区; column 集团开发商 has the question's 开发 in its name; column 项目名称 has the value '武汉长江中心'",
         "- table 武汉市武昌区土地成交信息表: its name shares 武汉市武昌区; column 项目名称 has the value '武汉长江中心'",
         '- look-alike tables (same columns, nothing in the question names them): 武汉市江汉区2022年07月商品房成交价格表']),
    'values found exactly and nearly': (
        [('city', 3.0),
         ('airport', 2.5),
         ('country', 0.0)],
        (),
        ['Matched in table names and data without a model (check before relying on it):',
         "- table city: the question uses column population; column name has the value 'São Paulo' (near (1.00) to 'Sao Paulo'); column name has the value 'Lyon'",
         "- table airport: column city has the value 'São Paulo' (near (1.00) to 'Sao Paulo'); column city has the value 'Lyon'"]),
    'a compound table name and a bridge': (
        [('keyphrase', 4.946),
         ('paperkeyphrase', 2.773),
         ('author', 1.946),
         ('writes', 1.945),
         ('paper', 1.946),
         ('venue', 0.0)],
        (),
        ['Matched in table names and data without a model (check before relying on it):',
         "- table keyphrase: its name shares keyphrase; column keyphrasename has the value 'deep learning'",
         '- table paperkeyphrase: its name shares keyphrase, paper',
         '- table author: its name shares author',
         '- table writes: it joins paperkeyphrase and author',
         '- table paper: its name shares paper']),
    'ties': (
        [('shop_a_orders', 1.599),
         ('shop_b_orders', 1.599),
         ('customers', 0.0),
         ('notes', 0.0)],
        (),
        ['Matched in table names and data without a model (check before relying on it):',
         '- table shop_a_orders: its name shares order; the question uses column order_id',
         '- table shop_b_orders: its name shares order; the question uses column order_id']),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_ranks_scores_and_rendered_links_of_general_examples_are_pinned(tmp_path: Path, case: str) -> None:
    ranked, lookalikes, rendered = PINNED[case]
    links = linked(tmp_path, case)
    assert [(t.name, t.score) for t in links.tables] == ranked
    assert links.lookalikes == lookalikes
    assert links.render().splitlines() == rendered


def test_the_links_name_the_signal_of_every_hit_and_a_signal_is_left_out_by_name(tmp_path: Path) -> None:
    links = linked(tmp_path, "a month against yearly and monthly tables")
    first = links.tables[0]
    assert [h.signal for h in first.hits] == ["month_in_name", "name_terms", "column_named", "value_found"]
    question, _, _ = CASES["a month against yearly and monthly tables"]
    with Catalog.open(tmp_path / "task_case") as catalog:
        without = link_question(catalog, question, signals=[s for s in LINK_SIGNALS if s.name != "month_in_name"])
    assert dict((t.name, t.score) for t in without.tables)["orders_2022_03"] == pytest.approx(first.score - 4.0)


# -- each signal on its own example -----------------------------------------------------------------

MARCH = QuestionFacts(months=frozenset({"2022-03"}), years=frozenset({"2022"}))


def test_month_in_name_rewards_a_name_with_the_questions_month() -> None:
    assert month_in_name(MARCH, TableFacts("sales_2022_03", months=frozenset({"2022-03"}))) == [
        LinkHit("month_in_name", "its name says 2022-03")]
    assert month_in_name(MARCH, TableFacts("sales_2022_04", months=frozenset({"2022-04"}))) == []
    assert month_in_name(QuestionFacts(years=frozenset({"2022"})), TableFacts("s", months=frozenset({"2022-03"}))) == []


def test_year_in_name_rewards_a_name_with_the_questions_year_or_its_months_year() -> None:
    in_2022 = QuestionFacts(years=frozenset({"2022"}))
    assert year_in_name(in_2022, TableFacts("sales_2022", years=frozenset({"2022"}))) == [
        LinkHit("year_in_name", "its name says 2022")]
    assert year_in_name(QuestionFacts(months=frozenset({"2022-03"})), TableFacts("sales_2022", years=frozenset({"2022"}))
                        ) == [LinkHit("year_in_name", "its name says 2022")]
    assert year_in_name(in_2022, TableFacts("sales_2021", years=frozenset({"2021"}))) == []
    # both name months: the month decides, not the year
    assert year_in_name(MARCH, TableFacts("s", months=frozenset({"2022-04"}), years=frozenset({"2022"}))) == []


def test_other_period_vetoes_a_name_with_another_month_or_year() -> None:
    april = TableFacts("sales_2022_04", months=frozenset({"2022-04"}), years=frozenset({"2022"}))
    (hit,) = other_period(MARCH, april)
    assert hit.signal == "other_period" and hit.reason == "its name says 2022-04, the question 2022-03"
    assert other_period(MARCH, TableFacts("sales_2021", years=frozenset({"2021"})))[0].reason == (
        "its name says 2021, the question 2022")
    assert other_period(MARCH, TableFacts("sales_2022_03", months=frozenset({"2022-03"}))) == []
    assert other_period(QuestionFacts(), april) == [] and other_period(MARCH, TableFacts("customers")) == []
    # a veto: whatever else links the table, it scores below every table nothing links
    veto = (LINK_SIGNALS[2], [hit])
    assert LINK_SIGNALS[2].name == "other_period"
    assert signal_score([(LINK_SIGNALS[0], [LinkHit("month_in_name", "x")]), veto]) == -1.0
    assert signal_score([veto]) == -1.0


def test_name_terms_weighs_the_questions_terms_in_the_name_by_their_rarity() -> None:
    table = TableFacts("order_items", name_terms=(("item", 0.7), ("order", 0.0)), name_words=("item",))
    assert name_terms(QuestionFacts(), table) == [LinkHit("name_terms", "its name shares item", 0.7)]
    assert name_terms(QuestionFacts(), TableFacts("orders", name_terms=(("order", 0.0),))) == []


def test_knowledge_text_weighs_the_questions_words_in_knowledge_md_on_the_table() -> None:
    table = TableFacts("t_moves", knowledge_terms=(("warehouse", 1.0), ("parcel", 0.5), ("the", 0.0)))
    (hit,) = knowledge_text(QuestionFacts(), table)
    assert hit.reason == "knowledge.md's text on it shares parcel, the, warehouse" and hit.strength == 1.5
    assert signal_score([(LINK_SIGNALS[4], [hit])]) == pytest.approx(0.35 * 1.5)
    assert knowledge_text(QuestionFacts(), TableFacts("t", knowledge_terms=(("the", 0.0),))) == []


def test_column_named_counts_each_column_the_question_names_up_to_its_cap() -> None:
    table = TableFacts("projects", columns=(("amount", ""), ("city", ""), ("集团开发商", "开发")))
    hits = column_named(QuestionFacts(), table)
    assert signal_reasons([(LINK_SIGNALS[5], hits)]) == [
        "the question uses column amount, city", "column 集团开发商 has the question's 开发 in its name"]
    assert signal_score([(LINK_SIGNALS[5], hits)]) == 1.5
    many = TableFacts("wide", columns=tuple((f"c{i}", "") for i in range(6)))
    wide = column_named(QuestionFacts(), many)
    assert signal_score([(LINK_SIGNALS[5], wide)]) == 2.0  # four columns count
    assert signal_reasons([(LINK_SIGNALS[5], wide)]) == ["the question uses column c0, c1, c2"]


def test_value_found_counts_exact_values_more_and_values_many_tables_hold_less() -> None:
    table = TableFacts("city", values=(
        FoundValue("France", "column country has the value 'France'", exact=True, tables=2),
        FoundValue("São Paulo", "column name has the value 'São Paulo' (near)", exact=False),
        FoundValue("Lyon", "column name has the value 'Lyon'", exact=True),
        FoundValue("Nice", "column name has the value 'Nice'", exact=True, tables=3)))
    hits = value_found(QuestionFacts(), table)
    assert signal_score([(LINK_SIGNALS[6], hits)]) == pytest.approx(3.0 / 2 + 2.0 + 3.0 + 3.0 / 3)
    # said most distinctive first (fewest tables, then the longest), at most SHOWN_VALUES
    assert signal_reasons([(LINK_SIGNALS[6], hits)]) == [
        "column name has the value 'São Paulo' (near)", "column name has the value 'Lyon'",
        "column country has the value 'France'"]


def test_signal_hits_leaves_out_the_signals_that_found_nothing() -> None:
    fired = signal_hits(MARCH, TableFacts("sales_2022_03", months=frozenset({"2022-03"})))
    assert [signal.name for signal, _ in fired] == ["month_in_name"]


def test_every_signal_has_a_name_a_weight_a_docstring_and_a_row_in_docs_rules() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Linking signals"):]
    rows = {cells[0].strip("`"): cells[1] for line in section.splitlines() if line.startswith("| `")
            for cells in [[c.strip() for c in line.strip("|").split("|")]]}
    names = [signal.name for signal in LINK_SIGNALS]
    assert len(set(names)) == len(names) == 7
    for signal in LINK_SIGNALS:
        assert signal.name == signal.find.__name__
        assert isinstance(signal.weight, float) and signal.weight != 0
        assert len(signal.doc) > 40, signal.name
        assert float(rows[signal.name].replace("−", "-")) == signal.weight, signal.name
