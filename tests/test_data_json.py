"""Every JSON shape the engine promises, loaded through the catalog."""

import json

import pytest

from datasolver.data import Catalog
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def _dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def test_table_records_shape_uses_table_key_as_name(tmp_path):
    doc = {"table": "Unicorns (2022)", "records": [{"Company": "A", "Val": "$140", "code": "007"}]}
    task = write_task(tmp_path, files={"json/whatever.json": _dump(doc)})
    with Catalog.open(task) as cat:
        assert cat.names() == ["unicorns__2022_"]
        assert cat.query('SELECT Company, Val, code FROM "Unicorns (2022)"').rows == [("A", "$140", "007")]


def test_list_of_objects_and_json_lines(tmp_path):
    rows = [{"a": 1, "b": {"c": 2, "d": {"e": 3}}, "tags": ["x", "y"]}, {"a": 2, "extra": True}]
    task = write_task(tmp_path, files={
        "json/list.json": _dump(rows),
        "json/lines.jsonl": "\n".join(_dump(r) for r in rows) + "\n",
    })
    with Catalog.open(task) as cat:
        for table in ("list", "lines"):
            result = cat.query(f"SELECT a, b_c, b_d_e, tags, extra FROM {table} ORDER BY a")
            assert result.rows == [(1, 2, 3, ["x", "y"], None), (2, None, None, None, True)]


def test_object_of_lists_gives_one_table_per_key(tmp_path):
    doc = {"orders": [{"id": 1}, {"id": 2}], "customers": [{"id": 9, "name": "王"}], "version": 3}
    task = write_task(tmp_path, files={"json/shop.json": _dump(doc)})
    with Catalog.open(task) as cat:
        assert sorted(cat.names()) == ["shop_customers", "shop_orders"]
        assert cat.query("SELECT count(*) FROM shop_orders").rows == [(2,)]
        assert cat.query("SELECT name FROM shop_customers").rows == [("王",)]
        assert any("version" in n.reason for n in cat.notes)


def test_object_of_objects_keyed_by_id(tmp_path):
    doc = {"E1": {"name": "alpha", "score": 1.5}, "E2": {"name": "beta", "score": 2}}
    task = write_task(tmp_path, files={"json/people.json": _dump(doc)})
    with Catalog.open(task) as cat:
        assert cat.query("SELECT key, name, score FROM people ORDER BY key").rows == [
            ("E1", "alpha", 1.5), ("E2", "beta", 2.0)]


def test_knowledge_graph_shape(tmp_path):
    doc = {
        "entities": {"p1": {"type": "product", "name": "Widget"}, "p2": {"type": "product", "name": "Gadget"}},
        "attributes": {"p1": {"price": 9.5, "color": "red"}, "p2": {"price": 12, "color": "blue"}},
        "relations": [{"source": "p1", "type": "compatible_with", "target": "p2"}],
    }
    task = write_task(tmp_path, files={"json/kg.json": _dump(doc)})
    with Catalog.open(task) as cat:
        assert sorted(cat.names()) == ["kg_attributes", "kg_entities", "kg_relations"]
        assert cat.query("SELECT name FROM kg_entities WHERE key = 'p2'").rows == [("Gadget",)]
        assert cat.query("SELECT price FROM kg_attributes ORDER BY price").rows == [(9.5,), (12.0,)]
        assert cat.query("SELECT source, type, target FROM kg_relations").rows == [("p1", "compatible_with", "p2")]


def test_mixed_type_values_load_without_loss(tmp_path):
    rows = [{"v": 1}, {"v": "abc"}, {"v": 2.5}, {"v": None}, {"v": True}]
    task = write_task(tmp_path, files={"json/m.json": _dump(rows)})
    with Catalog.open(task) as cat:
        assert cat.query("SELECT v FROM m").rows == [("1",), ("abc",), ("2.5",), (None,), ("true",)]


def test_file_over_16_mb(tmp_path):
    rows = [{"id": i, "text": "x" * 180} for i in range(90_000)]
    task = write_task(tmp_path, files={"json/big.json": _dump({"table": "big", "records": rows})})
    assert (task / "context/json/big.json").stat().st_size > 16 * 1024 * 1024
    with Catalog.open(task) as cat:
        assert cat.query("SELECT count(*), max(id) FROM big").rows == [(90_000, 89_999)]


def test_broken_and_empty_json_are_reported_and_others_load(tmp_path):
    task = write_task(tmp_path, files={
        "json/broken.json": '{"table": "b", "records": [{"a": 1},',
        "json/also_broken.json": "{not json",
        "json/empty.json": "",
        "json/fine.json": _dump([{"a": 1}]),
    })
    with Catalog.open(task) as cat:
        assert cat.query("SELECT a FROM fine").rows == [(1,)]
        # broken.json looks like {"table": "b", ...} from its head, so it is registered lazily and
        # its failure shows once it is loaded; the other two fail at registration.
        cat.load()
        skipped = {s.path.split(" ")[0]: s.reason for s in cat.skipped}
        assert set(skipped) == {"json/broken.json", "json/also_broken.json", "json/empty.json"}
        assert "broken JSON" in skipped["json/also_broken.json"]
        assert "b" not in cat.names()


def test_integers_beyond_int64_stay_exact(tmp_path):
    rows = [{"id": 2**70}, {"id": 5}, {"id": None}]
    task = write_task(tmp_path, files={"json/big_ids.json": _dump(rows)})
    with Catalog.open(task) as cat:
        assert cat.query("SELECT id FROM big_ids").rows == [(str(2**70),), ("5",), (None,)]


def test_uniform_columns_keep_their_types(tmp_path):
    rows = [{"i": 1, "f": 1.5, "b": True, "s": "007", "n": 2}, {"i": None, "f": None, "b": False, "s": "x", "n": 2.5}]
    task = write_task(tmp_path, files={"json/t.json": _dump(rows)})
    with Catalog.open(task) as cat:
        result = cat.query("SELECT i, f, b, s, n FROM t")
        assert result.types == ["BIGINT", "DOUBLE", "BOOLEAN", "VARCHAR", "DOUBLE"]
        assert result.rows == [(1, 1.5, True, "007", 2.0), (None, None, False, "x", 2.5)]
