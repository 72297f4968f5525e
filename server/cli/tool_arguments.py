"""Command-line text as a tool's arguments, each value typed by the tool's JSON schema
(`scoperag search` options, `scoperag call key=value`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from scoperag.core.filters.params import as_list

if TYPE_CHECKING:
    from mcp.types import Tool

_JSON_TYPES = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def schema_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a parameter's schema accepts (through `anyOf` / `oneOf` too)."""
    kinds = schema.get("type")
    types = {kinds} if isinstance(kinds, str) else set(kinds or ())
    for member in schema.get("anyOf", []) + schema.get("oneOf", []):
        types |= schema_types(member)
    if "integer" in types:
        types.add("number")  # a JSON number with no fraction is an integer
    return types


def parse_value(text: str, schema: dict[str, Any]) -> Any:
    """`text` parsed as JSON when it parses (`5`, `true`, `["a","b"]`, `null`), else the text.

    Text that parses to a type the parameter does not take, where it takes strings (a
    document id `2024`), stays text.
    """
    try:
        value = json.loads(text)
    except ValueError:
        return text
    types = schema_types(schema)
    kind = "integer" if type(value) is int else _JSON_TYPES.get(type(value), "object")
    if types and kind not in types and "string" in types:
        return text
    return value


def parse_values(texts: list[str], schema: dict[str, Any]) -> Any:
    """One parameter's value from the texts given for it: a list parameter collects several
    texts, each read by `as_list` as every surface reads one (a JSON array, else itself: the
    tool's declared type splits a comma-separated text where it takes one); any other
    parameter takes one text."""
    types = schema_types(schema)
    if "array" not in types:
        if len(texts) > 1:
            raise click.UsageError(f"{texts!r}: one value only (this parameter is not a list).")
        return parse_value(texts[0], schema)
    if len(texts) == 1 and texts[0].strip() == "null" and "null" in types:
        return None
    items = _array_items(schema)
    return [
        parse_value(item, items) if isinstance(item, str) else item
        for text in texts
        for item in as_list(text, split=False) or []
    ]


def _array_items(schema: dict[str, Any]) -> dict[str, Any]:
    if schema.get("type") == "array" or "array" in (schema.get("type") or ()):
        return schema.get("items", {})
    return next(
        (m.get("items", {}) for m in schema.get("anyOf", []) if "array" in schema_types(m)), {}
    )


def parse_arguments(pairs: tuple[str, ...], tool: Tool) -> dict[str, Any]:
    """`key=value` pairs as the tool's arguments (a repeated key of a list parameter collects
    its values); a pair without `=` is a usage error."""
    properties = tool.input_schema.get("properties", {})
    texts: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise click.UsageError(f"{pair!r} is not key=value (e.g. query='fire spell' limit=3).")
        texts.setdefault(key, []).append(value)
    # a key the tool does not declare goes as text: the tool names it and its close parameter
    return {key: parse_values(values, properties.get(key, {})) for key, values in texts.items()}
