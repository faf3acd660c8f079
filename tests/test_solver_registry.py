"""The tool registry: four tools, each with a docstring, a schema and an args model that agree."""

from __future__ import annotations

import inspect

import pytest

from datasolver.solver.tools import SOLVER_TOOLS, tool_schemas

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

EXPECTED = {
    "explore_data": {"query": None, "limit": 50},
    "read_solver": {"offset": 1, "limit": 400},
    "edit_solver": {
        "sql": None, "start_line": None, "start_hash": None, "new_content": None,
        "end_line": None, "end_hash": None, "insert_after": False,
    },
    "run_solver": {"self_check": True, "show_rows": 5, "timeout": 120},
}
REQUIRED = {"explore_data": ["query"], "read_solver": [], "edit_solver": [],
            "run_solver": []}


def test_registry_lists_exactly_the_four_tools_in_order() -> None:
    assert [t.name for t in SOLVER_TOOLS] == ["explore_data", "read_solver", "edit_solver", "run_solver"]


@pytest.mark.parametrize("tool", SOLVER_TOOLS, ids=lambda t: t.name)
def test_each_tool_has_a_description_and_documents_every_parameter(tool) -> None:
    assert tool.function.__doc__ and len(tool.description) > 40
    assert "Args:" not in tool.description
    assert set(tool.parameter_docs) == set(tool.args_model.model_fields)
    assert all(len(doc) > 10 for doc in tool.parameter_docs.values())


@pytest.mark.parametrize("tool", SOLVER_TOOLS, ids=lambda t: t.name)
def test_signature_model_and_schema_agree(tool) -> None:
    params = list(inspect.signature(tool.function).parameters.values())[1:]  # after ctx
    signature = {p.name: (None if p.default is inspect.Parameter.empty else p.default) for p in params}
    assert signature == EXPECTED[tool.name]
    model = {name: (None if f.is_required() else f.default) for name, f in tool.args_model.model_fields.items()}
    assert model == EXPECTED[tool.name]

    schema = tool.schema()
    assert schema["type"] == "function"
    fn = schema["function"]
    assert fn["name"] == tool.name and fn["description"] == tool.description
    assert list(fn["parameters"]["properties"]) == list(EXPECTED[tool.name])
    assert fn["parameters"]["required"] == REQUIRED[tool.name]
    for name, prop in fn["parameters"]["properties"].items():
        assert prop["description"] == tool.parameter_docs[name]
        assert "title" not in prop


def test_tool_schemas_is_the_registry_in_order_and_json_serializable() -> None:
    import json

    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == [t.name for t in SOLVER_TOOLS]
    json.dumps(schemas)


def test_no_tool_takes_a_path() -> None:
    for tool in SOLVER_TOOLS:
        assert not any("path" in name or "file" in name for name in tool.args_model.model_fields)
