"""A tool's form, built from its input schema, and a submitted form back into arguments.

Every parameter becomes one input; the tool validates the arguments itself, so a form accepts
what the tool accepts and its errors are the tool's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoperag.core.errors import InvalidParameterError


@dataclass(frozen=True)
class FormField:
    """One input: `kind` is text, integer, number, checkbox, boolean, select, list or json."""

    name: str
    label: str
    kind: str
    required: bool
    default: Any
    description: str
    choices: tuple[str, ...] = ()


def _variants(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-null alternatives of a property (`anyOf`, else the property itself)."""
    options = schema.get("anyOf") or [schema]
    return [option for option in options if option.get("type") != "null"]


def _kind(schema: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    variants = _variants(schema)
    types = {variant.get("type") for variant in variants}
    first = variants[0] if variants else {}
    if "enum" in first:
        return "select", tuple(str(choice) for choice in first["enum"])
    if types == {"boolean"}:
        return ("checkbox" if schema.get("default") in (False, None) else "boolean"), ()
    if types <= {"integer"} and types:
        return "integer", ()
    if types <= {"number", "integer"} and types:
        return "number", ()
    if "string" in types:
        return "text", ()  # a string, or a string or a list (e.g. comma-separated tags)
    if types == {"array"}:
        items = first.get("items", {})
        return ("list", ()) if items.get("type") in ("string", None) else ("json", ())
    return "json", ()


def form_fields(schema: dict[str, Any]) -> list[FormField]:
    """The inputs of a tool's input schema, required ones first, in declared order."""
    required = set(schema.get("required") or ())
    fields = []
    for name, prop in (schema.get("properties") or {}).items():
        kind, choices = _kind(prop)
        fields.append(
            FormField(
                name=name,
                label=prop.get("title") or name.replace("_", " ").capitalize(),
                kind=kind,
                required=name in required,
                default=prop.get("default"),
                description=prop.get("description", ""),
                choices=choices,
            )
        )
    return sorted(fields, key=lambda field: not field.required)


def _value(field: FormField, raw: str) -> Any:
    if field.kind == "integer":
        try:
            return int(raw)
        except ValueError:
            raise InvalidParameterError(field.name, raw, "a whole number") from None
    if field.kind == "number":
        try:
            return float(raw)
        except ValueError:
            raise InvalidParameterError(field.name, raw, "a number") from None
    if field.kind in ("checkbox", "boolean"):
        if raw not in ("true", "false", "on"):
            raise InvalidParameterError(field.name, raw, "true or false")
        return raw != "false"
    if field.kind == "list":
        return [part.strip() for part in raw.split(",") if part.strip()]
    if field.kind == "json":
        try:
            return json.loads(raw)
        except ValueError:
            raise InvalidParameterError(field.name, raw, 'JSON, e.g. {"key": "value"}') from None
    return raw


def form_arguments(schema: dict[str, Any], form: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments a submitted form gives: an empty input is left out (the tool's default),
    every other one is read as its parameter's type."""
    arguments = {}
    for field in form_fields(schema):
        raw = form.get(field.name)
        if isinstance(raw, str) and raw.strip():
            arguments[field.name] = _value(field, raw.strip() if field.kind != "text" else raw)
    return arguments


def form_values(schema: dict[str, Any], form: Mapping[str, Any]) -> dict[str, str]:
    """What to show in each input again: the submitted text, else the default."""
    values = {}
    for field in form_fields(schema):
        raw = form.get(field.name)
        if isinstance(raw, str):
            values[field.name] = raw
        elif field.default is not None and field.kind != "checkbox":
            default = field.default
            text = json.dumps(default) if field.kind == "json" else str(default)
            values[field.name] = text.lower() if isinstance(default, bool) else text
    return values
