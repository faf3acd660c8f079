"""Knowledge-graph data: relation tables found, symmetric types answered both ways, others directed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.ask import AskToolbox, open_package
from datasolver.ask.graph import symmetric_types

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

GRAPH = {
    "entities": {
        "cpu1": {"name": "Ryzen 5", "kind": "cpu"},
        "mb1": {"name": "B550 Board", "kind": "motherboard"},
        "mb2": {"name": "X570 Board", "kind": "motherboard"},
        "ram1": {"name": "DDR4 16GB", "kind": "memory"},
    },
    "attributes": {"cpu1": {"watts": 65}, "mb1": {"watts": 10}},
    "relations": [
        {"source": "cpu1", "type": "compatible_with", "target": "mb1"},
        {"source": "mb2", "type": "compatible_with", "target": "cpu1"},
        {"source": "mb1", "type": "supports", "target": "ram1"},
    ],
}


def write_graph(folder: Path, knowledge: str | None) -> Path:
    folder.mkdir(parents=True)
    (folder / "parts.json").write_text(json.dumps(GRAPH), encoding="utf-8")
    if knowledge is not None:
        (folder / "knowledge.md").write_text(knowledge, encoding="utf-8")
    return folder


def related(package, **args) -> list[tuple]:
    toolbox = AskToolbox(package)
    result = toolbox.call("related", args)
    assert result.ok, result.text
    return sorted(toolbox.handles.fetch(result.value.index).rows)


def test_symmetric_relation_is_answered_both_ways(tmp_path: Path) -> None:
    data = write_graph(tmp_path / "d", "# Parts\nCompatibility (`compatible_with`) is symmetric.\n")
    with open_package(data, cache_dir=tmp_path / "c") as package:
        (graph,) = package.graphs
        assert (graph.relations, graph.entities, graph.symmetric) == ("parts_relations", "parts_entities", {"compatible_with"})
        # cpu1 is the source of one compatible_with row and the target of the other: both count.
        assert related(package, entity="cpu1", relation="compatible_with") == [
            ("cpu1", "compatible_with", "mb1", "symmetric", "B550 Board"),
            ("cpu1", "compatible_with", "mb2", "symmetric", "X570 Board"),
        ]
        # The same from the other side, asked by name.
        assert related(package, entity="X570 Board") == [("mb2", "compatible_with", "cpu1", "symmetric", "Ryzen 5")]


def test_directed_relation_keeps_its_direction(tmp_path: Path) -> None:
    data = write_graph(tmp_path / "d", "compatible_with is symmetric.")
    with open_package(data, cache_dir=tmp_path / "c") as package:
        assert related(package, entity="ram1", relation="supports") == []
        assert related(package, entity="ram1", relation="supports", direction="in") == [
            ("ram1", "supports", "mb1", "in", "B550 Board")]
        assert related(package, entity="mb1", relation="supports") == [("mb1", "supports", "ram1", "out", "DDR4 16GB")]


def test_without_a_declaration_nothing_is_symmetric_but_a_flag_makes_it_so(tmp_path: Path) -> None:
    data = write_graph(tmp_path / "d", None)
    with open_package(data, cache_dir=tmp_path / "c") as package:
        assert package.graphs[0].symmetric == set()
        assert [r[2] for r in related(package, entity="cpu1")] == ["mb1"]
    with open_package(data, cache_dir=tmp_path / "c", symmetric=["Compatible_With"]) as package:
        assert package.graphs[0].symmetric == {"compatible_with"}
        assert [r[2] for r in related(package, entity="cpu1")] == ["mb1", "mb2"]


def test_unknown_relation_type_is_a_fixable_mistake(tmp_path: Path) -> None:
    data = write_graph(tmp_path / "d", None)
    with open_package(data, cache_dir=tmp_path / "c") as package:
        result = AskToolbox(package).call("related", {"entity": "cpu1", "relation": "fits"})
        assert (result.kind, result.text) == (
            "retry", "UnknownRelation: no relation type 'fits' in parts_relations. Types: compatible_with, supports")


@pytest.mark.parametrize(
    ("knowledge", "expected"),
    [
        ("compatible_with is symmetric", {"compatible_with"}),
        ("The compatible with relation holds in both directions.", {"compatible_with"}),
        ("compatible_with：对称关系", {"compatible_with"}),
        ("supports is directed; compatible_with too", set()),
        ("A symmetric key is unrelated to supports_all", set()),
    ],
)
def test_symmetric_types_from_knowledge(knowledge: str, expected: set) -> None:
    assert symmetric_types(knowledge, ["compatible_with", "supports"]) == expected


def test_no_graph_means_no_related_tool(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "t.csv").write_text("a\n1\n", encoding="utf-8")
    with open_package(tmp_path / "d", cache_dir=tmp_path / "c") as package:
        assert "related" not in AskToolbox(package).names
