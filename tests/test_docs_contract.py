"""docs_search_filters/v1 and doc_extension_payload/v1 as values: no store, no model."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.docs import (
    DOCS_FILTERS,
    DocExtensionPayload,
    TimestampError,
    parse_rfc3339,
    required_indexes,
)
from scoperag.core.errors import InvalidParameterError
from scoperag.core.filters.fields import index_plan
from scoperag.server.profiles.docs.filters import DEFAULT_STATUS, DocsSearchRequest

PAYLOAD = {
    "scope": "org_shared",
    "status": "active",
    "doc_type": "runbook",
    "agent_id": "agent-atlas",
    "updated_at": "2025-06-01T12:00:00Z",
}


@pytest.mark.parametrize(
    ("text", "instant"),
    [
        ("2025-06-01T12:00:00Z", datetime(2025, 6, 1, 12, tzinfo=UTC)),
        ("2025-06-01T14:00:00+02:00", datetime(2025, 6, 1, 12, tzinfo=UTC)),
        ("2025-06-01t07:00:00-05:00", datetime(2025, 6, 1, 12, tzinfo=UTC)),
        ("2025-06-01 12:00:00z", datetime(2025, 6, 1, 12, tzinfo=UTC)),
        ("2025-06-01T12:00:00.123456789Z", datetime(2025, 6, 1, 12, 0, 0, 123456, tzinfo=UTC)),
    ],
)
def test_rfc3339_instants(text: str, instant: datetime) -> None:
    assert parse_rfc3339(text) == instant


@pytest.mark.parametrize(
    "text",
    [
        "2025-06-01",
        "2025-06-01T12:00Z",
        "yesterday",
        "2025-13-01T00:00:00Z",
        "2025-06-01T12:00:00+2",
    ],
)
def test_not_rfc3339(text: str) -> None:
    with pytest.raises(TimestampError, match="RFC3339"):
        parse_rfc3339(text)


def test_naive_timestamp_is_refused_as_ambiguous() -> None:
    with pytest.raises(TimestampError, match="ambiguous"):
        parse_rfc3339("2025-06-01T12:00:00")


def test_payload_contract_names_and_rules() -> None:
    assert set(DocExtensionPayload.model_fields) == set(PAYLOAD)
    assert DocExtensionPayload.model_validate(PAYLOAD).model_dump() == PAYLOAD
    with pytest.raises(ValidationError, match="ambiguous"):
        DocExtensionPayload.model_validate({**PAYLOAD, "updated_at": "2025-06-01T12:00:00"})
    with pytest.raises(ValidationError, match="org_shared"):
        DocExtensionPayload.model_validate({**PAYLOAD, "scope": "team"})


def test_required_indexes_are_four_keywords_and_a_datetime() -> None:
    (collection, fields), *others = required_indexes(Settings()).items()
    assert collection == "docs" and not others
    plan = index_plan(fields)
    assert plan == {
        "scope": "keyword",
        "status": "keyword",
        "doc_type": "keyword",
        "agent_id": "keyword",
        "updated_at": "datetime",
    }
    assert fields is DOCS_FILTERS


def test_status_defaults_to_active_and_nothing_else_is_added() -> None:
    flt = DocsSearchRequest(query="q").filters().qdrant_filter()
    assert flt == models.Filter(
        must=[models.FieldCondition(key="status", match=models.MatchValue(value=DEFAULT_STATUS))]
    )
    explicit = DocsSearchRequest(query="q", status="archived").filters()
    assert explicit.status == "archived"


def test_bounds_are_exclusive_instants_on_updated_at() -> None:
    filters = DocsSearchRequest(
        query="q",
        updated_after="2025-06-01T14:00:00+02:00",
        updated_before="2025-06-01T12:00:01Z",
    ).filters()
    ranges = [c.range for c in filters.qdrant_filter().must if c.key == "updated_at"]
    assert ranges == [
        models.DatetimeRange(gt=datetime(2025, 6, 1, 14, tzinfo=timezone(timedelta(hours=2)))),
        models.DatetimeRange(lt=datetime(2025, 6, 1, 12, 0, 1, tzinfo=UTC)),
    ]


def test_all_filters_combine_with_and() -> None:
    filters = DocsSearchRequest(
        query="q", scope="agent_private", doc_type="runbook", agent_id="agent-atlas"
    ).filters()
    keys = sorted(c.key for c in filters.qdrant_filter().must)
    assert keys == ["agent_id", "doc_type", "scope", "status"]


@pytest.mark.parametrize(
    ("arguments", "field", "rule"),
    [
        ({"scope": "team_shared"}, "scope", "one of agent_private, project_shared, org_shared"),
        ({"updated_after": "2025-06-01"}, "updated_after", "RFC3339"),
        ({"updated_before": "last tuesday"}, "updated_before", "RFC3339"),
        ({"updated_before": "2025-06-01T12:00:00"}, "updated_before", "time zone"),
        (
            {
                "updated_after": "2025-06-01T12:00:00Z",
                "updated_before": "2025-06-01T14:00:00+02:00",
            },
            "updated_after",
            "earlier than updated_before",
        ),
        (
            {"updated_after": "2025-06-02T00:00:00Z", "updated_before": "2025-06-01T00:00:00Z"},
            "updated_after",
            "exclusive",
        ),
        ({"status": ""}, "status", "non-empty"),
        ({"agent_id": "   "}, "agent_id", "non-empty"),
    ],
)
def test_invalid_filters_name_field_value_and_rule(
    arguments: dict[str, str], field: str, rule: str
) -> None:
    with pytest.raises(InvalidParameterError) as caught:
        DocsSearchRequest(query="q", **arguments).filters()
    error = caught.value
    assert (error.parameter, error.value) == (field, arguments[field])
    assert rule in error.accepted
    assert str(error).startswith(f"Invalid value for '{field}': {json.dumps(arguments[field])}.")
