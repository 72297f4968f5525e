"""No stranded versions: deleting, pruning or expiring a version of a memory's line leaves the
version it replaced in its place (current again), or the whole line goes when asked; "Already
stored" only of a memory search finds; a long history says it was cut; a stale update says
what happened. Over MCP (in-process FastMCP client) and the CLI, on every engine."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner
from fastmcp import Client
from fastmcp.exceptions import ToolError

from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.memory import versions
from scoperag.server.runtime import Runtime


async def call(runtime: Runtime, tool: str, **arguments: Any) -> dict[str, Any]:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(tool, arguments)
    return result.structured_content


async def line_of_three(runtime: Runtime) -> list[str]:
    """A memory updated twice: the hashes of versions 1, 2 and 3."""
    first = await call(runtime, "store_memory", content="Deploys are on Mondays.", tags="ops")
    hashes = [first["content_hash"]]
    for day in ("Tuesdays", "Fridays"):
        later = await call(
            runtime, "update_memory", content_hash=hashes[-1], content=f"Deploys are on {day}."
        )
        hashes.append(later["content_hash"])
    return hashes


async def found(runtime: Runtime) -> list[str]:
    result = await call(runtime, "search", query="which day are deploys", page_size=10)
    return [row["content_hash"] for row in result["memories"]]


async def test_deleting_the_current_version_makes_the_one_it_replaced_current(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    v1, v2, v3 = await line_of_three(runtime)
    assert await found(runtime) == [v3]  # the subject ran: v3 alone is current
    deleted = await call(runtime, "delete_memory", content_hash=v3)
    assert deleted["deleted"] is True
    assert await found(runtime) == [v2]
    history = await call(runtime, "memory_history", content_hash=v1)
    rows = {row["content_hash"]: row for row in history["versions"]}
    assert set(rows) == {v1, v2} and rows[v2]["superseded_by"] is None
    assert rows[v1]["superseded_by"] == v2
    updated = await call(runtime, "update_memory", content_hash=v2, content="Deploys: Sundays.")
    assert updated["version"] == 3 and await found(runtime) == [updated["content_hash"]]


async def test_deleting_a_middle_version_links_its_predecessor_to_its_successor(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    v1, v2, v3 = await line_of_three(runtime)
    await call(runtime, "delete_memory", content_hash=v2)
    history = await call(runtime, "memory_history", content_hash=v3)
    rows = {row["content_hash"]: row for row in history["versions"]}
    assert set(rows) == {v1, v3} and rows[v1]["superseded_by"] == v3
    assert await found(runtime) == [v3]


async def test_the_whole_line_goes_when_asked(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime(profiles=["memory"])
    v1, _, v3 = await line_of_three(runtime)
    deleted = await call(runtime, "delete_memory", content_hash=v3, whole_line=True)
    assert deleted["message"] == "Deleted 3 versions."
    assert await found(runtime) == []
    shown = await call(runtime, "search", query="deploys", include_superseded=True)
    assert shown["memories"] == []


async def test_pruning_an_expired_current_version_brings_back_the_one_before(
    make_runtime: Callable[..., Runtime],
) -> None:
    from scoperag.server.profiles.memory.expiry import expired, prune

    runtime = make_runtime(profiles=["memory"])
    v1, v2, v3 = await line_of_three(runtime)
    await call(runtime, "update_memory", content_hash=v3, expires_at="2020-01-01T00:00:00Z")
    [gone] = expired(runtime.backend)
    assert gone["version"] == 4  # the subject ran: the current version expired
    assert prune(runtime.backend, runtime.settings.data_dir, [gone["content_hash"]]) == 1
    assert await found(runtime) == [v3]


async def test_already_stored_is_said_only_of_a_memory_search_finds(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    v1, _, v3 = await line_of_three(runtime)
    again = await call(runtime, "store_memory", content="Deploys are on Fridays.")
    assert again["stored"] is False and again["message"].startswith("Already stored")
    hidden = await call(runtime, "store_memory", content="Deploys are on Mondays.")
    assert hidden["stored"] is False and "Already stored" not in hidden["message"]
    assert "search hides it" in hidden["message"] and "replaced by" in hidden["message"]


async def test_a_stale_update_says_what_replaced_it_without_blaming_another_writer(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    v1, v2, v3 = await line_of_three(runtime)
    with pytest.raises(ToolError) as error:
        await call(runtime, "update_memory", content_hash=v1, content="Deploys: never.")
    message = str(error.value)
    assert f"version 1, replaced by {v2[:12]}" in message and f"version is 3 ({v3})" in message
    assert "another writer" not in message


async def test_a_history_longer_than_shown_says_it_was_cut(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime(profiles=["memory"])
    v1, _, v3 = await line_of_three(runtime)
    monkeypatch.setattr(versions, "MOST_VERSIONS", 2)
    monkeypatch.setattr(versions, "PAGE", 2)  # read in pages of two: three pages
    history = await call(runtime, "memory_history", content_hash=v1)
    assert history["total"] == 3 and [row["version"] for row in history["versions"]] == [2, 3]
    assert (
        history["note"] == "the line has 3 versions: the newest 2 are shown, the oldest 1 are not"
    )


def test_the_cli_delete_of_a_current_version_keeps_the_line(
    cli_with_shared_model: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCOPERAG_PROFILES", "memory")
    runner = cli_with_shared_model

    def run(*arguments: str) -> dict[str, Any]:
        result = runner.invoke(cli, list(arguments))
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    first = run("call", "--json", "store_memory", "content=Backups run nightly.")
    second = run(
        "memory", "update", "--json", first["content_hash"], "--content", "Backups run hourly."
    )
    deleted = run("delete", "--json", "memory", second["content_hash"][:12], "--yes")
    assert deleted["points_deleted"] == 1
    listed = run("search", "memory", "backups", "--json")
    assert [row["content_hash"] for row in listed["memories"]] == [first["content_hash"]]
