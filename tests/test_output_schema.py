"""Every tool's input and output schema passes the MCP Inspector's strict portability check
(`inspector --cli --method tools/list --strict`) with no finding, and output schemas are
pydantic's, made self-contained exactly as FastMCP would send them.

`portability_findings` runs the same rules as the Inspector 2.12's `core/json/schemaLint.ts`
(what `--strict` reports): a `type` given as a list of types, a subschema that constrains
nothing (`{}`), a bare `true`/`false` where a schema object is expected, and a `$ref` outside
the document. Where the Inspector is installed, it is also run against `scoperag serve`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.utilities.json_schema import dereference_refs
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from scoperag.core.config.settings import Settings
from scoperag.server.mcp.app import build_server
from scoperag.server.mcp.output_schema import inline_refs
from scoperag.server.runtime import Runtime

# keywords whose value is a schema, a list of schemas, or a map of names to schemas
SCHEMA_KEYWORDS = (
    "items",
    "contains",
    "not",
    "propertyNames",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
    "contentSchema",
)
SCHEMA_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_MAP_KEYWORDS = (
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "$defs",
    "definitions",
)
BOOLEAN_ALLOWED = {"additionalProperties", "unevaluatedProperties", "additionalItems"}
BOOLEAN_ALLOWED.add("unevaluatedItems")
# a schema with none of these (nor an if/then or if/else pair) accepts every value
CONSTRAINING = {
    *("type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum"),
    *("exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "contentMediaType"),
    *("contentEncoding", "contentSchema", "maxItems", "minItems", "uniqueItems", "maxContains"),
    *("minContains", "maxProperties", "minProperties", "required", "dependentRequired"),
    *("allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "contains", "additionalItems"),
    *("unevaluatedItems", "properties", "patternProperties", "additionalProperties"),
    *("unevaluatedProperties", "propertyNames", "dependentSchemas", "dependencies"),
    *("$ref", "$dynamicRef", "$recursiveRef"),
}
JSON_TYPES = {"null", "boolean", "object", "array", "number", "string", "integer"}
MAX_DEPTH = 64
INSPECTOR_VERSION = "2.12"


def portability_findings(schema: Any) -> list[tuple[str, str]]:
    """(rule, path) of each finding of the Inspector's strict check in one tool schema."""
    findings: list[tuple[str, str]] = []
    _walk(schema, "", None, 0, findings, _declares_id(schema, 0))
    return findings


def _subschemas(node: dict[str, Any], path: str) -> list[tuple[Any, str, str]]:
    found = []
    for key in SCHEMA_MAP_KEYWORDS:
        if isinstance(node.get(key), dict):
            found += [(sub, f"{path}.{key}.{name}", key) for name, sub in node[key].items()]
    for key in SCHEMA_LIST_KEYWORDS:
        if isinstance(node.get(key), list):
            found += [(sub, f"{path}.{key}[{i}]", key) for i, sub in enumerate(node[key])]
    for key in SCHEMA_KEYWORDS:
        if key in node:
            value = node[key]
            if key == "items" and isinstance(value, list):
                found += [(sub, f"{path}.items[{i}]", key) for i, sub in enumerate(value)]
            else:
                found.append((value, f"{path}.{key}", key))
    return found


def _declares_id(node: Any, depth: int) -> bool:
    if depth > MAX_DEPTH or not isinstance(node, dict):
        return False
    if isinstance(node.get("$id"), str) and node["$id"]:
        return True
    return any(_declares_id(sub, depth + 1) for sub, _, _ in _subschemas(node, ""))


def _walk(node: Any, path: str, keyword: str | None, depth: int, found: list, ids: bool) -> None:
    if depth > MAX_DEPTH:
        return
    if isinstance(node, bool):
        if keyword not in BOOLEAN_ALLOWED:
            found.append(("boolean-schema", path))
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if isinstance(kind, list) and kind and set(kind) <= JSON_TYPES and len(set(kind)) == len(kind):
        found.append(("type-union", path))
    ref = node.get("$ref")
    if isinstance(ref, str) and ref and not ref.startswith("#") and not ids:
        found.append(("remote-ref", path))
    paired = "if" in node and ("then" in node or "else" in node)
    if not (CONSTRAINING & node.keys() or paired) and keyword != "not":
        found.append(("untyped-schema", path))
    for sub, sub_path, sub_keyword in _subschemas(node, path):
        _walk(sub, sub_path, sub_keyword, depth + 1, found, ids)


async def _listed_tools(tmp_path: Path) -> list[Any]:
    """`tools/list` of a server with every profile, as an MCP client receives it."""
    server = build_server(Runtime(Settings(data_dir=tmp_path, backend="edge")))
    async with Client(server) as client:
        return await client.list_tools()


@pytest.mark.parametrize(
    ("schema", "rules"),
    [
        ({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}, ["type-union"]),
        ({"type": "object", "additionalProperties": {}}, ["untyped-schema"]),
        ({"type": "object", "properties": {"a": True}}, ["boolean-schema"]),
        ({"$ref": "https://example.com/s.json"}, ["remote-ref"]),
        (
            {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/x"}], "$defs": {"x": {}}},
            ["untyped-schema"],
        ),
        ({"type": "object", "additionalProperties": False, "properties": {"a": {"not": {}}}}, []),
        ({"if": {"const": 1}, "then": {"type": "integer"}}, []),
    ],
)
def test_the_check_finds_what_the_inspector_flags(schema: dict, rules: list[str]) -> None:
    assert [rule for rule, _ in portability_findings(schema)] == rules


async def test_every_tool_schema_passes_the_strict_portability_check(tmp_path: Path) -> None:
    tools = await _listed_tools(tmp_path)
    assert len(tools) >= 17
    findings = {
        (tool.name, kind, rule, path)
        for tool in tools
        for kind, schema in (("input", tool.input_schema), ("output", tool.output_schema))
        if schema is not None
        for rule, path in portability_findings(schema)
    }
    assert findings == set()
    for tool in tools:
        Draft202012Validator.check_schema(tool.input_schema)
        if tool.output_schema is not None:
            Draft202012Validator.check_schema(tool.output_schema)


async def test_output_schemas_reuse_definitions_and_input_schemas_are_self_contained(
    tmp_path: Path,
) -> None:
    """An output schema keeps pydantic's definitions, each once, referred to by `$ref` inside
    the document; an input schema is inlined once when the tools are built, exactly as FastMCP's
    `DereferenceRefsMiddleware` would inline it."""
    server = build_server(Runtime(Settings(data_dir=tmp_path, backend="edge")))
    referring = 0
    for tool in await server.list_tools():
        assert "$ref" not in str(tool.parameters)
        if not hasattr(tool, "params_model"):
            continue
        params = tool.params_model.model_json_schema()
        assert inline_refs(params) == dereference_refs(params), tool.name
        output = tool.output_schema or {}
        refs = set(re.findall(r"'\$ref': '#/\$defs/(\w+)'", str(output)))
        assert refs <= set(output.get("$defs", {})), tool.name
        assert "$ref" not in str(dereference_refs(output)), tool.name
        referring += bool(refs)
    assert referring >= 10


def test_a_self_referring_schema_is_left_as_it_is() -> None:
    class Tree(BaseModel):
        children: list[Tree] = []

    schema = Tree.model_json_schema()
    assert "$ref" in str(schema) and inline_refs(schema) == schema


def _inspector() -> str | None:
    """The MCP Inspector's launcher: `MCP_INSPECTOR` (a path), else `mcp-inspector` on PATH."""
    return os.environ.get("MCP_INSPECTOR") or shutil.which("mcp-inspector")


def test_the_inspector_itself_finds_nothing_in_scoperag_serve(tmp_path: Path) -> None:
    inspector = _inspector()
    if inspector is None or shutil.which("node") is None:
        pytest.skip(
            f"the MCP Inspector {INSPECTOR_VERSION} is not installed (CI machines have only "
            "Python): `npm install @modelcontextprotocol/inspector` and set MCP_INSPECTOR to its "
            "node_modules/.bin/mcp-inspector to run it; the rules run above in Python"
        )
    serve = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert serve, "the scoperag console script is not installed"
    done = subprocess.run(
        [inspector, "--cli", "--method", "tools/list", "--strict", serve, "serve"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SCOPERAG_DATA_DIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr and "Error" not in done.stderr, done.stderr
    assert '"tools"' in done.stdout
