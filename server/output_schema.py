"""Tool output schemas that MCP clients check quickly: `{"type": ["string", "null"]}` for an
optional value of one simple type, instead of pydantic's `anyOf` of two schemas.

Both forms accept exactly the same values. A client validating a result against `anyOf` tries
the first branch, builds an error object when the value is null, then tries the second; with a
list of types it makes one type check. MCP's Python client (jsonschema) checks a page of 20 D&D
hits in 1.6 ms where `anyOf` takes 2.4 ms. Input schemas keep `anyOf`: some clients that turn
them into function declarations for their model refuse a list of types.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

# keywords of a one-type schema that never reject null once "null" is among its types
_IGNORED_BY_NULL = frozenset(
    {
        "type",
        "title",
        "description",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
    }
)


class _NullAsType(GenerateJsonSchema):
    """pydantic's JSON schema, with `X | None` of one simple type as a list of two types."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        kind = inner.get("type")
        if (
            not isinstance(kind, str)
            or kind == "null"
            or not _IGNORED_BY_NULL.issuperset(inner.keys() - {"enum"})
        ):
            return super().nullable_schema(schema)
        collapsed = {**inner, "type": [kind, "null"]}
        if "enum" in inner:  # an enum must list null itself, or null fails it
            collapsed["enum"] = [*inner["enum"], None]
        return collapsed


def output_schema(result: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of what a tool returns, as its `outputSchema`."""
    return inline_refs(result.model_json_schema(mode="serialization", schema_generator=_NullAsType))


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `$ref` to its `$defs` replaced by the definition (keywords beside the
    `$ref` kept), and `$defs` dropped; a schema whose definitions refer to themselves is
    returned as it is.

    Self-contained schemas are what FastMCP sends anyway (its `DereferenceRefsMiddleware`, for
    clients that cannot follow `$ref`): built so here once, a `tools/list` does not inline them
    again on every call, nor import `jsonref` (and `requests`) for the first one.
    """
    definitions = schema.get("$defs")
    if not definitions:
        return schema

    def resolve(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen:
                raise RecursionError(name)
            siblings = {key: value for key, value in node.items() if key != "$ref"}
            return {**resolve(definitions[name], seen | {name}), **resolve(siblings, seen)}
        return {key: resolve(value, seen) for key, value in node.items() if key != "$defs"}

    try:
        return resolve(schema, frozenset())
    except RecursionError:
        return schema
