"""A memory filter is one declaration: a `FilterableField` added to `MEMORY_FILTERS` is a
parameter of the `search` tool, an option of `scoperag search memory` and a Qdrant condition,
with no other file edited (the diff docs/architecture.md shows)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fastmcp import Client

from scoperag.core.contracts import memory
from scoperag.core.filters.fields import Condition, FieldType, FilterableField
from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

MIN_VERSION = FilterableField(
    name="min_version",
    key="version",
    field_type=FieldType.INTEGER,
    condition=Condition.GTE,
    ge=1,
    description="Only versions numbered at least this.",
)


@pytest.fixture
def declared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "MEMORY_FILTERS", [*memory.MEMORY_FILTERS, MIN_VERSION])


def _json(runner: CliRunner, *args: str) -> dict:
    result = runner.invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_declared_field_is_a_parameter_an_option_and_a_condition(
    declared: None, cli_with_shared_model: CliRunner
) -> None:
    runner = cli_with_shared_model
    first = _json(runner, "call", "store_memory", "content=Deploys run on Tuesdays.", "--json")
    update = ["memory", "update", first["content_hash"], "--content", "Deploys run on Thursdays."]
    second = _json(runner, *update, "--json")
    assert second["version"] == 2

    helped = runner.invoke(cli, ["search", "memory", "--help"])
    assert helped.exit_code == 0 and "--min-version" in helped.output
    assert "Only versions numbered at least this." in " ".join(helped.output.split())

    every = ["--mode", "faceted", "--include-superseded", "true", "--json"]
    both = _json(runner, "search", "memory", *every)
    assert {row["version"] for row in both["memories"]} == {1, 2}
    newest = _json(runner, "search", "memory", *every, "--min-version", "2")
    assert [row["content_hash"] for row in newest["memories"]] == [second["content_hash"]]


async def test_the_tool_schema_and_the_applied_filter_carry_it(
    declared: None, make_runtime
) -> None:
    runtime: Runtime = make_runtime(profiles=["memory"])
    async with Client(build_server(runtime)) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        schema = tools["search"].input_schema["properties"]["min_version"]
        assert schema["description"] == MIN_VERSION.description
        await client.call_tool("store_memory", {"content": "Backups run nightly."})
        found = await client.call_tool(
            "search", {"query": "backups", "min_version": 1, "explain": True}
        )
    data = found.structured_content
    assert data["memories"], "the search found nothing"
    applied = data["explain"]["filter"]["must"]
    assert {"key": "version", "range": {"gte": 1}} in applied
