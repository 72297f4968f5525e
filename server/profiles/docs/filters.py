"""`docs_search_filters/v1`: the one validation of a docs search, shared by HTTP and MCP.

`DocsSearchRequest` is the wire shape (JSON body of `POST /v2/docs/search/l0`, arguments of
`elf_docs_search_l0`); pydantic checks only the JSON types. `DocsSearchRequest.filters()` applies
the contract's rules and raises `InvalidParameterError` naming the field, the value and the rule,
so both interfaces refuse bad input with the same message.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

from scoperag.core.contracts.docs import DOCS_FILTERS, SCOPES, TimestampError, parse_rfc3339
from scoperag.core.errors import InvalidParameterError, as_json
from scoperag.core.filters.fields import FieldType, FilterableField, build_filter
from scoperag.core.filters.params import Explain, Query, RawName, StrictParams

FILTER_CONTRACT = "docs_search_filters/v1"
DEFAULT_STATUS = "active"
_SCOPE_RULE = "one of " + ", ".join(SCOPES)
_TEXT_RULE = "a non-empty string (exact match)"

if TYPE_CHECKING:
    from qdrant_client import models


class DocsSearchFilters(BaseModel):
    """Checked filter values (`status` defaulted); every one given narrows the search (AND)."""

    scope: Literal[SCOPES] | None = None  # type: ignore[valid-type]
    status: str = DEFAULT_STATUS
    doc_type: str | None = None
    agent_id: str | None = None
    updated_after: datetime | None = None
    updated_before: datetime | None = None

    def qdrant_filter(self) -> models.Filter | None:
        """The native Qdrant filter: exclusive `DatetimeRange` bounds, keyword matches."""
        return build_filter(DOCS_FILTERS, self.model_dump())


def _instant(name: str, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_rfc3339(value)
    except TimestampError as exc:
        raise InvalidParameterError(name, value, exc.rule) from None


def _text(name: str, value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise InvalidParameterError(name, value, _TEXT_RULE)
    return value


def _wire_parameter(field: FilterableField) -> tuple[Any, Any]:
    """A filter as it arrives: an optional string, described and hinted in the JSON schema."""
    hint: dict[str, Any] = {}
    if field.choices:
        hint["enum"] = [*field.choices, None]
    if field.field_type is FieldType.DATETIME:
        hint["format"] = "date-time"
    return Annotated[
        RawName | None, Field(description=field.description, json_schema_extra=hint)
    ], None


class SearchParameters(StrictParams):
    """What a docs search asks for, beside its filters."""

    query: Query = Field(description="What to look for, in natural language.")
    top_k: int = Field(default=10, ge=1, le=100, description="How many chunks to return at most.")
    explain: Explain = False


_DocsSearchWire = create_model(
    "DocsSearchWire",
    __base__=SearchParameters,
    **{field.name: _wire_parameter(field) for field in DOCS_FILTERS},
)


class DocsSearchRequest(_DocsSearchWire):
    """A docs search: query, top_k and the docs_search_filters/v1 filters as given."""

    def filters(self) -> DocsSearchFilters:
        """The `docs_search_filters/v1` rules; raises `InvalidParameterError` on a bad value."""
        given: dict[str, Any] = self.model_dump()
        scope = given["scope"]
        if scope is not None and scope not in SCOPES:
            raise InvalidParameterError("scope", scope, _SCOPE_RULE)
        after = _instant("updated_after", given["updated_after"])
        before = _instant("updated_before", given["updated_before"])
        if after is not None and before is not None and after >= before:
            raise InvalidParameterError(
                "updated_after",
                given["updated_after"],
                "an instant earlier than updated_before "
                f"({as_json(given['updated_before'])}); both bounds are exclusive, so "
                "updated_after < updated_at < updated_before",
            )
        return DocsSearchFilters(
            scope=scope,
            status=_text("status", given["status"]) or DEFAULT_STATUS,
            doc_type=_text("doc_type", given["doc_type"]),
            agent_id=_text("agent_id", given["agent_id"]),
            updated_after=after,
            updated_before=before,
        )
