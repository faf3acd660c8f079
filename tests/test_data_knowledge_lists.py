"""knowledge.md's column lists and key lines in the forms people write them (`data.knowledge_lists`)."""

from __future__ import annotations

import pytest

from datasolver.data.knowledge_lists import KeyFact, find_column_lists, header_role, read_key_line

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def lists(text: str):
    return find_column_lists(text.splitlines())


def test_english_headers_in_any_common_words_get_their_roles() -> None:
    (found,) = lists("| Field | Data Type | Meaning | Examples | Unit |\n|---|---|---|---|---|\n"
                     "| price | float | Price paid | 1.5; 2 | EUR |\n")
    assert found.roles == ("name", "type", "meaning", "examples", "unit")
    assert found.names() == ["price"] and found.kept(found.rows[0]) == ["Price paid", "EUR"]


def test_chinese_headers_get_the_same_roles() -> None:
    (found,) = lists("| 字段名 | 数据类型 | 说明 | 取值 | 单位 |\n|---|---|---|---|---|\n"
                     "| 状态 | 文本 | 订单状态 | 1 表示已发货，0 表示未发货 | 文本 |\n| 金额 | 小数 | 订单金额 | 如 3.5 | 元 |\n")
    assert found.roles == ("name", "type", "meaning", "values", "unit")
    # a value meaning stays, a bare type word in the unit cell goes; an example list goes
    assert found.kept(found.rows[0]) == ["订单状态", "1 表示已发货，0 表示未发货"]
    assert found.kept(found.rows[1]) == ["订单金额", "元"]


def test_value_lists_go_and_value_meanings_stay() -> None:
    (found,) = lists("| column | type | description | values |\n|---|---|---|---|\n"
                     "| a | text | Kind | e.g. x; y (1 missing) |\n| b | text | Flag | one of: Y, N |\n"
                     "| c | int | Level | one of: 1 = low, 2 = high |\n| d | text | Empty | (no values) (3 missing) |\n"
                     "| e | text | e.g. 08:00; 10:00 | e.g. 08:00 |\n")
    assert [found.kept(row) for row in found.rows] == [
        ["Kind"], ["Flag"], ["Level", "one of: 1 = low, 2 = high"], ["Empty"], []]


def test_bird_database_description_csv_is_a_column_list() -> None:
    text = ("### frpm\n\n```csv\noriginal_column_name,column_name,column_description,data_format,value_description\n"
            "CDSCode,CDSCode,,text,\nFRPM Count (K-12),,\"Free or reduced price meals, K-12\",real,\n"
            "Charter,Charter School,whether it is a charter school,integer,\"0: N; 1: Y\"\n```\n")
    (found,) = lists(text)
    assert found.form == "csv" and (found.start, found.end) == (2, 8)  # the fences belong to it
    assert found.roles == ("name", "meaning", "meaning", "type", "meaning")  # BIRD's column_name is a meaning
    assert found.names() == ["CDSCode", "FRPM Count (K-12)", "Charter"]
    # a cell repeating the name says nothing; the type goes; value descriptions stay
    assert [found.kept(row) for row in found.rows] == [
        [], ["Free or reduced price meals, K-12"], ["Charter School", "whether it is a charter school", "0: N; 1: Y"]]


def test_a_data_table_or_a_ragged_one_is_no_column_list() -> None:
    assert lists("| city | staff |\n|---|---|\n| Lyon | 80 |\n") == []
    assert lists("| column | type |\n|---|---|\n| a | int | extra |\n") == []
    assert header_role("Column_Name") == "name" and header_role("column_name", bird=True) == "meaning"


def test_key_lines_in_english_and_chinese() -> None:
    assert read_key_line("Primary key (inferred): `aid`.") == [KeyFact("Primary key (inferred)", "aid")]
    assert read_key_line("Join key: `author.oid` references `organization.oid`.") == [
        KeyFact("Join key", "author.oid", "organization.oid", "references")]
    assert read_key_line("Join key: `AIRLINE.airline_code` can be joined with `flight.airline_code`.") == [
        KeyFact("Join key", "AIRLINE.airline_code", "flight.airline_code", "can be joined with")]
    assert read_key_line("主键：country；外键：country → richest_countries.country") == [
        KeyFact("主键", "country"), KeyFact("外键", "country", "richest_countries.country", "→")]
    assert read_key_line("关联键：order_id = orders.id") == [KeyFact("关联键", "order_id", "orders.id", "=")]


def test_other_lines_and_composite_keys_are_no_key_facts() -> None:
    assert read_key_line("Primary key: `a`, `b`.") is None  # said once, as written
    assert read_key_line("外键：无") is None
    assert read_key_line("The key to this table is the id column.") is None
