"""Reusable parameter types with the bounds every engine can honour, used by every profile.

Each type refuses, naming the parameter (pydantic puts the name in the error's location), what
a Qdrant engine could not store or compare exactly: NUL bytes and lone surrogates in strings,
whitespace-only values where one is required, integers beyond 64 bits, infinite or NaN floats,
and texts longer than the documented caps below.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    WithJsonSchema,
)

# Documented length caps (characters; metadata: bytes of its JSON).
MAX_QUERY_CHARS = 2_000
MAX_NAME_CHARS = 512
MAX_PATH_CHARS = 4_096
MAX_TEXT_CHARS = 100_000
MAX_METADATA_BYTES = 65_536
MAX_METADATA_DEPTH = 8
# Qdrant payload integers and point counts are signed 64-bit.
MAX_INT = 2**63 - 1
MIN_INT = -(2**63)


class StrictParams(BaseModel):
    """Base of every tool's parameters: an argument the tool does not declare is an error."""

    model_config = ConfigDict(extra="forbid")


def clean_text(value: str) -> str:
    """Refuse NUL bytes and lone surrogates, which no engine stores as given."""
    if "\x00" in value:
        raise ValueError("contains a NUL byte (\\x00); remove it")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            "contains a lone surrogate (an unpaired \\ud800-\\udfff); send valid Unicode"
        ) from None
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must be non-empty text, not only whitespace")
    return value


def _bounded_json(value: Any) -> Any:
    """Metadata: clean strings (keys too), at most MAX_METADATA_DEPTH deep and
    MAX_METADATA_BYTES of JSON."""
    _check_json(value, depth=0)
    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"is {size} bytes of JSON; at most {MAX_METADATA_BYTES} are accepted")
    return value


def _check_json(value: Any, depth: int) -> None:
    if depth > MAX_METADATA_DEPTH:
        raise ValueError(f"is nested deeper than {MAX_METADATA_DEPTH} levels")
    if isinstance(value, str):
        clean_text(value)
    elif isinstance(value, bool):
        return
    elif isinstance(value, int) and not MIN_INT <= value <= MAX_INT:
        raise ValueError(f"holds the integer {value}, outside the signed 64-bit range")
    elif isinstance(value, dict):
        for key, item in value.items():
            clean_text(key)
            _check_json(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_json(item, depth + 1)


# what a list item never holds: the marks of a JSON array sent as text and split on its commas
LIST_MARKS = '[]"'


def plain_item(value: str) -> str:
    """Refuse a list item holding `[`, `]` or `"`: the pieces of a JSON array read as text."""
    marks = [mark for mark in LIST_MARKS if mark in value]
    if marks:
        raise ValueError(
            f"holds {' and '.join(marks)}, which no list item may hold: it looks like a piece "
            'of a JSON array read as text; send the list whole, e.g. ["deploy", "staging"]'
        )
    return value


def as_list(value: Any, split: bool = True) -> Any:
    """A list argument as every surface (MCP, CLI, Python, HTTP, UI) reads it: a list as it is,
    the text of a JSON array (`'["a", "b"]'`, as some MCP clients send one) as that array, and
    with `split` any other text, and each text item of a list, as its comma-separated items
    (`"a, b"`: a, b), stripped, blanks dropped; blank text is left out (None). Without `split`
    a text is a list of itself (a path may hold a comma). Anything else is returned as it is,
    for the declared type to refuse; numbers as text are the declared item type's to read."""
    if isinstance(value, str):
        if not value.strip():
            return None
        if value.strip().startswith("["):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                value = parsed
        if isinstance(value, str):
            value = [value]
    if not isinstance(value, list | tuple):
        return value
    if not split:
        return list(value)
    items: list[Any] = []
    for item in value:
        pieces = item.split(",") if isinstance(item, str) else [item]
        items += [piece.strip() if isinstance(piece, str) else piece for piece in pieces]
    return [item for item in items if item != ""]


def listed(item: Any, split: bool = True, most: int = 1_000) -> Any:
    """A list of `item` read by `as_list`, at most `most` long; its JSON schema also takes one
    text where `split` (a comma-separated string)."""
    plain = Annotated[list[item], Field(max_length=most)]
    schema_type = item | plain if split else plain
    reader = as_list if split else _unsplit
    return Annotated[plain, BeforeValidator(reader, json_schema_input_type=schema_type)]


def _unsplit(value: Any) -> Any:
    return as_list(value, split=False)


_CLEAN = AfterValidator(clean_text)
_REQUIRED = AfterValidator(_not_blank)

Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS), _CLEAN, _REQUIRED]
"""A search query or a quote: 1 to MAX_QUERY_CHARS characters, not only whitespace."""
OptionalQuery = Annotated[str, Field(max_length=MAX_QUERY_CHARS), _CLEAN]
"""A query that may be empty (meaning: no ranking)."""
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS), _CLEAN, _REQUIRED]
"""An id, label, tag, slug or other exact value."""
FilePath = Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS), _CLEAN, _REQUIRED]
"""A file or folder path as given (checked against SCOPERAG_ALLOWED_DIRS by the tool)."""
FilePaths = Annotated[listed(FilePath, split=False), Field(min_length=1)]
RawName = Annotated[str, Field(max_length=MAX_NAME_CHARS), _CLEAN]
"""Like `Name`, where the caller's own contract decides what an empty value means."""
ListItem = Annotated[Name, AfterValidator(plain_item)]
"""One exact value of a list: a `Name` without `[`, `]` or `"`."""
Names = listed(ListItem)
"""A list of exact values (tags, slugs, hashes): a list, a JSON array as text, or one
comma-separated string."""
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS), _CLEAN, _REQUIRED]
"""A text to store."""
# any JSON value, each of its kinds named (pydantic writes `{}` for `JsonValue`, which portable
# schema checks read as "constrains nothing")
MetadataValue = Annotated[
    JsonValue,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": kind}
                for kind in ("string", "number", "boolean", "null", "array", "object")
            ]
        }
    ),
]
Metadata = Annotated[dict[str, MetadataValue], AfterValidator(_bounded_json)]
"""A JSON object stored with a text."""
Int64 = Annotated[int, Field(ge=MIN_INT, le=MAX_INT)]
Index = Annotated[int, Field(ge=0, le=MAX_INT)]
"""A 0-based position: page index, sentence id, chapter."""
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]

Explain = Annotated[
    bool,
    Field(
        description="Also say why: each hit's dense, BM25 and fused score and rank from the "
        "engine, and the filter as applied and what the floor, gate, de-duplication or limit "
        "dropped."
    ),
]
