"""User-declared filter fields for `qdrant-find`: JSON in an env var, or a TOML file."""

from __future__ import annotations

import json
import tomllib

from pydantic import TypeAdapter, ValidationError

from scoperag.core.config.settings import Settings
from scoperag.core.errors import ScoperagError
from scoperag.core.filters.fields import FilterableField

_FIELDS = TypeAdapter(list[FilterableField])


def configured_fields(settings: Settings, reserved: set[str]) -> list[FilterableField]:
    """Fields from SCOPERAG_FILTERABLE_FIELDS and SCOPERAG_FIELDS_FILE, checked for clashes."""
    raw: list[object] = []
    if settings.filterable_fields:
        try:
            raw += json.loads(settings.filterable_fields)
        except json.JSONDecodeError as exc:
            raise ScoperagError(f"SCOPERAG_FILTERABLE_FIELDS is not valid JSON: {exc}") from None
    if settings.fields_file:
        try:
            raw += tomllib.loads(settings.fields_file.read_text()).get("fields", [])
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ScoperagError(f"SCOPERAG_FIELDS_FILE {settings.fields_file}: {exc}") from None
    try:
        fields = _FIELDS.validate_python(raw)
    except ValidationError as exc:
        raise ScoperagError(f"Invalid filterable field declaration: {exc}") from None
    names = [field.name for field in fields]
    keys = [field.payload_key for field in fields]
    clashes = sorted(
        {name for name in names if name in reserved or names.count(name) > 1}
        | {key for key in keys if key in reserved or keys.count(key) > 1}
    )
    if clashes:
        raise ScoperagError(
            f"Filterable field name(s) or key(s) {clashes} are used twice or clash with the "
            f"tool's own parameters and built-in filters ({', '.join(sorted(reserved))}); "
            "rename them."
        )
    return fields
