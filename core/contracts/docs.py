"""docs profile: the `doc_extension_payload/v1` payload of a document chunk and its filters."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field
from pydantic_core import PydanticCustomError

from scoperag.core.config.settings import Settings
from scoperag.core.filters.fields import Condition, FieldType, FilterableField

PAYLOAD_CONTRACT = "doc_extension_payload/v1"
COLLECTION = "docs"
SCOPES = ("agent_private", "project_shared", "org_shared")
RFC3339_RULE = (
    "an RFC3339 timestamp with a time zone, e.g. 2025-06-01T12:00:00Z or 2025-06-01T14:00:00+02:00"
)
NAIVE_RULE = (
    "an RFC3339 timestamp with a time zone (Z or +HH:MM / -HH:MM); without one the instant is "
    "ambiguous"
)
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?P<fraction>\.\d+)?(?P<zone>[Zz]|[+-]\d{2}:\d{2})?"
)


class TimestampError(ValueError):
    """A value that is not an RFC3339 timestamp with a time zone; `rule` says what is accepted."""

    def __init__(self, rule: str) -> None:
        self.rule = rule
        super().__init__(rule)


def parse_rfc3339(value: object) -> datetime:
    """The instant an RFC3339 timestamp names; raises `TimestampError` for anything else."""
    match = _RFC3339.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise TimestampError(RFC3339_RULE)
    if match["zone"] is None:
        raise TimestampError(NAIVE_RULE)
    fraction = match["fraction"] or ""
    text = value.replace(fraction, fraction[:7]).upper()  # datetime keeps microseconds
    try:
        return datetime.fromisoformat(text)
    except ValueError:  # a well-formed string naming no real date, e.g. month 13
        raise TimestampError(RFC3339_RULE) from None


def _rfc3339_text(value: str) -> str:
    try:
        parse_rfc3339(value)
    except TimestampError as exc:
        raise PydanticCustomError("rfc3339", exc.rule) from None
    return value


Rfc3339Text = Annotated[str, AfterValidator(_rfc3339_text)]
NonEmpty = Annotated[str, Field(min_length=1)]


class DocExtensionPayload(BaseModel):
    """`doc_extension_payload/v1`: the names and values every docs chunk carries."""

    scope: Literal[SCOPES] = Field(description="Who may see the document.")  # type: ignore[valid-type]
    status: NonEmpty = Field(description="Lifecycle state, e.g. active, draft, archived.")
    doc_type: NonEmpty = Field(description="Kind of document, e.g. runbook, design_doc.")
    agent_id: NonEmpty = Field(description="The agent that owns the document.")
    updated_at: Rfc3339Text = Field(description="Last update, RFC3339 with a time zone.")


class DocSource(DocExtensionPayload):
    """The contract fields plus the document they describe."""

    doc_id: NonEmpty = Field(description="The document's id, as given in the JSONL line.")
    title: str = Field(description="The document's title.")


class DocChunkPayload(DocSource):
    """The whole payload of one chunk (flat in Qdrant, beside LlamaIndex's own keys)."""

    chunk_index: int = Field(ge=0, description="0-based position of the chunk in its document.")


PAYLOAD_MODEL = DocChunkPayload  # what every stored point's payload fits (imports, check)


SCOPE = FilterableField(
    name="scope",
    field_type=FieldType.KEYWORD,
    choices=SCOPES,
    description="Only documents of this visibility: agent_private, project_shared or org_shared.",
)
STATUS = FilterableField(
    name="status",
    field_type=FieldType.KEYWORD,
    description="Only documents with this status (exact match). Defaults to 'active'.",
)
DOC_TYPE = FilterableField(
    name="doc_type",
    field_type=FieldType.KEYWORD,
    description="Only documents of this type, e.g. 'runbook' (exact match).",
)
AGENT_ID = FilterableField(
    name="agent_id",
    field_type=FieldType.KEYWORD,
    description="Only documents owned by this agent (exact match).",
)
UPDATED_AFTER = FilterableField(
    name="updated_after",
    key="updated_at",
    field_type=FieldType.DATETIME,
    condition=Condition.GT,
    description=(
        "Only documents updated strictly after this instant (RFC3339 with a time zone, "
        "e.g. 2025-06-01T12:00:00Z)."
    ),
)
UPDATED_BEFORE = FilterableField(
    name="updated_before",
    key="updated_at",
    field_type=FieldType.DATETIME,
    condition=Condition.LT,
    description=(
        "Only documents updated strictly before this instant (RFC3339 with a time zone, "
        "e.g. 2025-06-01T14:00:00+02:00)."
    ),
)
DOCS_FILTERS = [SCOPE, STATUS, DOC_TYPE, AGENT_ID, UPDATED_AFTER, UPDATED_BEFORE]


def required_indexes(settings: Settings) -> dict[str, list[FilterableField]]:
    """The docs collection and its indexed fields (keyword x4, datetime on updated_at)."""
    return {COLLECTION: DOCS_FILTERS}
