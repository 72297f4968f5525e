"""Tool schemas as pydantic writes them, made compact once when the tools are built: without
pydantic's generated titles; an output schema keeps its `$defs` (each definition sent once,
referred to by `$ref`), an input schema is made self-contained."""

from __future__ import annotations

from typing import Any

from fastmcp.utilities.json_schema import compress_schema
from pydantic import BaseModel


def output_schema(result: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of what a tool returns (pydantic's, serialization mode), as its
    `outputSchema`: definitions by `$ref`, no titles, no `"default": null` (an answer has no
    defaults: a field left out is absent), and the fields' descriptions without the models'
    (their docstrings, written for the code: `tools/list` repeats them in every tool)."""
    schema = compress_schema(result.model_json_schema(mode="serialization"), prune_titles=True)
    schema.pop("description", None)
    for name, definition in schema.get("$defs", {}).items():
        schema["$defs"][name] = {k: v for k, v in definition.items() if k != "description"}
    return _without_null_defaults(schema)


def input_schema(params: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a tool's parameters, self-contained (every client reads it), without
    titles."""
    schema = compress_schema(inline_refs(params.model_json_schema()), prune_titles=True)
    schema.pop("title", None)
    return schema


def _without_null_defaults(node: Any) -> Any:
    """`node` without its `"default": null` keywords (a property's schema is never null)."""
    if isinstance(node, list):
        return [_without_null_defaults(item) for item in node]
    if not isinstance(node, dict):
        return node
    kept = {key: value for key, value in node.items() if (key, value) != ("default", None)}
    return {key: _without_null_defaults(value) for key, value in kept.items()}


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `$ref` to its `$defs` replaced by the definition (keywords beside the
    `$ref` kept), and `$defs` dropped; a schema whose definitions refer to themselves is
    returned as it is.

    What FastMCP's `DereferenceRefsMiddleware` would do on every `tools/list` (for clients
    that cannot follow `$ref` in parameters), done here once, without importing `jsonref`.
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
