"""Tool schemas as pydantic writes them, made self-contained once when the tools are built."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def output_schema(result: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of what a tool returns (pydantic's, serialization mode), as its
    `outputSchema`."""
    return inline_refs(result.model_json_schema(mode="serialization"))


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
