"""Tool output schemas state an optional value as a list of two types, and accept exactly what
pydantic's own schema accepts (issue 15: a client checks a result faster)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from fastmcp.utilities.json_schema import dereference_refs
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from scoperag.core.settings import Settings
from scoperag.server.app import build_server
from scoperag.server.output_schema import inline_refs, output_schema
from scoperag.server.runtime import Runtime

# values of every JSON type, in and out of the ranges and enums the tools' models declare
PROBES: list[Any] = [
    None,
    "",
    "spell",
    "weapon",
    "exact",
    "x" * 300,
    0,
    -1,
    3,
    10,
    0.5,
    -0.5,
    True,
    [],
    ["a"],
    [1],
    {},
]


async def result_models(tmp_path: Path) -> dict[str, tuple[type[BaseModel], dict[str, Any]]]:
    """Every tool's result model and published output schema, by tool name (tools with a
    structured result)."""
    server = build_server(Runtime(Settings(data_dir=tmp_path, backend="edge")))
    tools = await server.list_tools()
    models = {
        tool.name: (tool.return_type, tool.output_schema)
        for tool in tools
        if isinstance(tool.return_type, type) and issubclass(tool.return_type, BaseModel)
    }
    assert len(models) >= 15
    return models


def properties(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Every object schema's properties in `schema`, `$defs` included."""
    found = []
    if isinstance(schema, dict):
        found += [schema["properties"]] if isinstance(schema.get("properties"), dict) else []
        for value in schema.values():
            found += properties(value)
    elif isinstance(schema, list):
        for value in schema:
            found += properties(value)
    return found


async def test_optional_values_are_a_list_of_types(tmp_path: Path) -> None:
    """Defect it guards: a `str | None` field published as `anyOf` made MCP's Python client
    build an error object for every null before accepting it."""
    listed = 0
    for name, (_model, schema) in (await result_models(tmp_path)).items():
        Draft202012Validator.check_schema(schema)
        for props in properties(schema):
            for field, spec in props.items():
                branches = spec.get("anyOf", [])
                simple = [b for b in branches if set(b) <= {"type", "enum"} and "$ref" not in b]
                assert not (len(branches) == 2 and len(simple) == 2), (name, field, spec)
                listed += isinstance(spec.get("type"), list)
    assert listed >= 10


@pytest.mark.parametrize("row", [0, 1])
async def test_the_schemas_accept_what_pydantic_schemas_accept(tmp_path: Path, row: int) -> None:
    """For each field of each tool's result (and of the models inside it), every probe value is
    accepted by the published schema exactly when pydantic's default schema accepts it."""
    checked = 0
    for name, (model, _published) in (await result_models(tmp_path)).items():
        ours = output_schema(model)
        reference = inline_refs(model.model_json_schema(mode="serialization"))
        for props, reference_props in zip(properties(ours), properties(reference), strict=True):
            assert props.keys() == reference_props.keys(), name
            for field, value in itertools.product(props, PROBES[row::2]):
                wanted = _accepts(reference, reference_props[field], value)
                assert _accepts(ours, props[field], value) == wanted, (name, field, value)
                checked += 1
    assert checked > 500


def _accepts(root: dict[str, Any], spec: dict[str, Any], value: Any) -> bool:
    """Whether `value` is valid for the property schema `spec` (its `$ref`s resolved in root)."""
    return Draft202012Validator({**spec, "$defs": root.get("$defs", {})}).is_valid(value)


async def test_listed_schemas_are_self_contained_as_fastmcp_would_send_them(
    tmp_path: Path,
) -> None:
    """Issue 15: schemas are inlined once when the tools are built, exactly as FastMCP's
    `DereferenceRefsMiddleware` inlines them (so it finds no `$ref` left on `tools/list`)."""
    server = build_server(Runtime(Settings(data_dir=tmp_path, backend="edge")))
    compared = 0
    for tool in await server.list_tools():
        assert "$ref" not in str(tool.parameters) and "$ref" not in str(tool.output_schema)
        if not hasattr(tool, "params_model"):
            continue
        params, result = tool.params_model, tool.return_type
        for schema in (params.model_json_schema(), result.model_json_schema(mode="serialization")):
            assert inline_refs(schema) == dereference_refs(schema), tool.name
            compared += "$defs" in schema
    assert compared >= 10


def test_a_self_referring_schema_is_left_as_it_is() -> None:
    class Tree(BaseModel):
        children: list[Tree] = []

    schema = Tree.model_json_schema()
    assert "$ref" in str(schema) and inline_refs(schema) == schema
