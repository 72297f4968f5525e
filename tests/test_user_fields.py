"""User-declared filter fields (SCOPERAG_FILTERABLE_FIELDS): checked at start-up, indexed like
the built-in ones, covered by `scoperag indexes check`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fastmcp import Client

from scoperag.core.config.settings import Settings
from scoperag.core.engine.index_status import index_report
from scoperag.core.errors import ScoperagError
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

YEAR = {"name": "year", "field_type": "integer", "condition": ">=", "description": "From year."}


async def test_declared_fields_are_indexed_and_filter(make_runtime: Callable[..., Runtime]) -> None:
    """Defect: user-declared fields got no payload index and `indexes check` ignored them."""
    runtime = make_runtime(profiles=["pdf"], filterable_fields=json.dumps([YEAR]))
    async with Client(build_server(runtime)) as client:
        for year in (2019, 2021):
            await client.call_tool(
                "qdrant-store", {"information": f"note of {year}", "metadata": {"year": year}}
            )
        found = await client.call_tool("qdrant-find", {"query": "note", "year": 2020})
    assert [hit["text"] for hit in found.structured_content["hits"]] == ["note of 2021"]
    (status,) = index_report(runtime.backend, runtime.settings).collections
    assert status.required["year"] == "integer"
    assert status.ready and not status.missing
    if runtime.backend.name != "local":  # local mode keeps no indexes at all
        assert runtime.backend.payload_indexes(status.collection)["year"] == "integer"


@pytest.mark.parametrize(
    ("declaration", "words"),
    [
        ({**YEAR, "field_type": "keyword", "condition": ">"}, ["'>'", "==, !=, any, all, except"]),
        ({**YEAR, "field_type": "float", "condition": "any"}, ["'any'", "<="]),
        ({**YEAR, "name": "query"}, ["'query'", "rename"]),
        ({**YEAR, "name": "page_label"}, ["'page_label'", "rename"]),
        ({**YEAR, "key": "physical_page_index"}, ["'physical_page_index'", "rename"]),
    ],
)
def test_bad_declarations_fail_at_start_up(
    tmp_path: Path, declaration: dict, words: list[str]
) -> None:
    """Defect: a bad pair failed only at call time; a name could shadow a tool's parameter."""
    settings = Settings(
        data_dir=tmp_path, profiles=["pdf"], filterable_fields=json.dumps([declaration])
    )
    with pytest.raises(ScoperagError) as caught:
        build_server(Runtime(settings))
    message = str(caught.value)
    assert all(word in message for word in words), message
