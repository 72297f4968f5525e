"""FilterableField: one declaration -> JSON schema, Qdrant filter, payload index."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, ValidationError
from qdrant_client import models

from scoperag.core.filters.fields import (
    Condition,
    FieldType,
    FilterableField,
    build_filter,
    empty_selection,
    index_plan,
    narrowed,
)
from scoperag.server.mcp.tooling import params_model

TAGS = FilterableField(
    name="tags", field_type=FieldType.KEYWORD, condition=Condition.ANY, description="Any tag."
)
PAGE = FilterableField(name="page", field_type=FieldType.INTEGER, ge=0, description="Page.")
AFTER = FilterableField(
    name="after", key="at", field_type=FieldType.DATETIME, condition=Condition.GT, description="x"
)
BEFORE = FilterableField(
    name="before", key="at", field_type=FieldType.DATETIME, condition=Condition.LT, description="y"
)


class Base(BaseModel):
    query: str


def test_left_out_values_add_no_condition() -> None:
    assert build_filter([TAGS, PAGE], {"tags": None}) is None


def test_values_become_native_conditions() -> None:
    flt = build_filter([TAGS, PAGE], {"tags": ["a", "b"], "page": 3})
    assert flt == models.Filter(
        must=[
            models.FieldCondition(key="tags", match=models.MatchAny(any=["a", "b"])),
            models.FieldCondition(key="page", match=models.MatchValue(value=3)),
        ]
    )


def test_two_parameters_bound_one_key() -> None:
    t0, t1 = datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 2, 1, tzinfo=UTC)
    flt = build_filter([AFTER, BEFORE], {"after": t0, "before": t1})
    assert [c.key for c in flt.must] == ["at", "at"]
    assert flt.must[0].range == models.DatetimeRange(gt=t0)
    assert flt.must[1].range == models.DatetimeRange(lt=t1)


@pytest.mark.parametrize(
    ("condition", "value", "expected"),
    [
        (
            Condition.NE,
            "x",
            {"must_not": [{"is_empty": {"key": "k"}}, {"key": "k", "match": {"value": "x"}}]},
        ),
        (
            Condition.ALL,
            ["a", "b"],
            {
                "must": [
                    {"key": "k", "match": {"value": "a"}},
                    {"key": "k", "match": {"value": "b"}},
                ]
            },
        ),
        (Condition.EXCEPT, ["a"], {"must": [{"key": "k", "match": {"except": ["a"]}}]}),
    ],
)
def test_condition_table(condition: Condition, value: object, expected: dict) -> None:
    field = FilterableField(
        name="k", field_type=FieldType.KEYWORD, condition=condition, description="d"
    )
    flt = build_filter([field], {"k": value})
    assert flt.model_dump(exclude_none=True, by_alias=True) == expected


def test_float_equality_is_a_closed_range() -> None:
    field = FilterableField(name="cr", field_type=FieldType.FLOAT, description="CR")
    (low, high) = build_filter([field], {"cr": 0.125}).must
    assert (low.range.gte, high.range.lte) == (0.125, 0.125)


def test_empty_list_matches_nothing_with_a_reason() -> None:
    assert "tags" in empty_selection([TAGS], {"tags": []})
    assert empty_selection([TAGS], {"tags": None}) is None


def test_schema_is_typed_and_described() -> None:
    schema = params_model("P", Base, [TAGS, PAGE]).model_json_schema()
    page = schema["properties"]["page"]
    assert page["description"] == "Page."
    assert {"type": "integer", "minimum": 0} in [
        {k: v for k, v in option.items() if k in ("type", "minimum")} for option in page["anyOf"]
    ]
    assert schema["required"] == ["query"]


def test_schema_validation_rejects_bad_values() -> None:
    model = params_model("P", Base, [PAGE])
    with pytest.raises(ValidationError):
        model.model_validate({"query": "q", "page": -1})
    assert model.model_validate({"query": "q", "page": "5"}).page == 5


def test_index_plan_has_one_index_per_key() -> None:
    plan = index_plan([TAGS, PAGE, AFTER, BEFORE])
    assert plan == {"tags": "keyword", "page": "integer", "at": "datetime"}


SPELL = models.FieldCondition(key="kind", match=models.MatchValue(value="spell"))
HIDDEN = models.Filter(must=[models.FieldCondition(key="gen", match=models.MatchValue(value="g2"))])


def test_narrowed_adds_conditions_flat_and_leaves_the_filter_alone() -> None:
    flt = models.Filter(must=[SPELL], must_not=[HIDDEN])
    both = narrowed(flt, must=[HIDDEN], must_not=[SPELL])
    assert both == models.Filter(must=[SPELL, HIDDEN], must_not=[HIDDEN, SPELL])
    assert flt == models.Filter(must=[SPELL], must_not=[HIDDEN])
    assert narrowed(None, must_not=[HIDDEN]) == models.Filter(must_not=[HIDDEN])


def test_narrowed_takes_single_conditions_and_keeps_should() -> None:
    flt = models.Filter(
        must=SPELL, should=[models.FieldCondition(key="n", range=models.Range(lt=5))]
    )
    both = narrowed(flt, must_not=[HIDDEN])
    assert both.must == [SPELL]
    assert both.should == flt.should
    assert both.must_not == [HIDDEN]


def test_narrowed_keeps_a_min_should_by_nesting_the_whole_filter() -> None:
    """A `min_should` has no place in the flat filter: dropping it would widen the search."""
    flt = models.Filter(min_should=models.MinShould(conditions=[SPELL], min_count=1))
    assert narrowed(flt, must_not=[HIDDEN]) == models.Filter(must=[flt], must_not=[HIDDEN])
