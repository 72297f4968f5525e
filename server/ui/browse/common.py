"""What the browse pages share: a page number read from the query, a facet value compared
with the type its payload index stores, a point's text, a collection's points in a key's order."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scoperag.core.errors import InvalidParameterError
from scoperag.server.ui.context import UiContext

TEXT_KEYS = ("content", "text", "_node_content", "description")  # where a point's text is


def page_number(query: Mapping[str, str], name: str = "page") -> int:
    """The query's page number (1 when not given)."""
    raw = query.get(name, "1") or "1"
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
        raise InvalidParameterError(name, raw, "a page number from 1")
    return int(raw)


def typed_value(backend: Any, collection: str, key: str, text: str) -> Any:
    """`text` as the type `key`'s payload index stores: "2024" and "007" stay strings for a
    keyword, become 2024 for an integer index; a value its type cannot hold is refused."""
    schema = str(backend.payload_indexes(collection).get(key, "keyword")).lower()
    readers = {"integer": int, "float": float, "bool": lambda t: {"true": True, "false": False}[t]}
    reader = next((r for kind, r in readers.items() if kind in schema), None)
    if reader is None:
        return text
    try:
        return reader(text.strip().lower() if "bool" in schema else text.strip())
    except (ValueError, KeyError):
        raise InvalidParameterError(key, text, f"a value of its {schema} index") from None


def match(backend: Any, collection: str, values: Mapping[str, str]) -> Any:
    """A filter: each payload key equal to its value, compared as its index stores it."""
    from qdrant_client import models

    conditions = [
        models.FieldCondition(
            key=key, match=models.MatchValue(value=typed_value(backend, collection, key, text))
        )
        for key, text in values.items()
        if text is not None
    ]
    return models.Filter(must=conditions) if conditions else None


def point_text(payload: Mapping[str, Any]) -> str:
    """A point's text: the first text key its payload has (LlamaIndex's JSON node, read)."""
    for key in TEXT_KEYS:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return str(json.loads(value).get("text", "")) if key == "_node_content" else value
    return ""


def ordered(
    ctx: UiContext, collection: str, flt: Any, key: str, limit: int, offset: int = 0
) -> list[dict[str, Any]]:
    """Payloads of the points matching `flt`, in `key`'s order (an indexed number)."""
    from qdrant_client import models

    records = ctx.runtime.backend.scroll(
        collection, flt, limit, offset, order_by=models.OrderBy(key=key, direction="asc")
    )
    return [record.payload or {} for record in records]
