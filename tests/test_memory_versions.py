"""A memory as a line of versions: update, supersede, history, merge, expiry and prune, over
MCP (in-process FastMCP client), the CLI and the engine's compare-and-set (`write_if`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastmcp import Client
from fastmcp.exceptions import ToolError
from qdrant_client import models

from scoperag.core.contracts.memory import COLLECTION, content_hash
from scoperag.core.errors import ConflictError
from scoperag.pipelines.memories import make_memory, memory_point
from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

PAST = "2020-01-01T00:00:00Z"


async def call(runtime: Runtime, tool: str, **arguments: Any) -> dict[str, Any]:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(tool, arguments)
    return result.structured_content


async def hashes(runtime: Runtime, **arguments: Any) -> list[str]:
    found = await call(runtime, "search", **arguments)
    return [row["content_hash"] for row in found["memories"]]


async def test_update_writes_a_new_version_and_hides_the_old(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    first = await call(runtime, "store_memory", content="Deploys are on Tuesdays.", tags="ops")
    assert first["version"] == 1 and first["supersedes"] == []
    old = first["content_hash"]
    second = await call(
        runtime, "update_memory", content_hash=old[:10], content="Deploys are on Thursdays."
    )
    assert second["version"] == 2 and second["supersedes"] == [old]
    assert second["content_hash"] == content_hash("Deploys are on Thursdays.")
    assert await hashes(runtime, query="deploy day") == [second["content_hash"]]
    shown = await call(runtime, "search", query="deploy day", include_superseded=True)
    rows = {row["content_hash"]: row for row in shown["memories"]}
    assert set(rows) == {old, second["content_hash"]}
    assert rows[old]["superseded_by"] == second["content_hash"]
    assert rows[second["content_hash"]].get("superseded_by") is None
    assert rows[second["content_hash"]]["tags"] == ["ops"]  # kept
    assert rows[second["content_hash"]]["created_at"] == rows[old]["created_at"]
    assert rows[second["content_hash"]]["updated_at"] > rows[old]["updated_at"]
    assert await hashes(runtime, mode="tag", tags="ops") == [second["content_hash"]]


async def test_a_tags_only_update_is_a_version_of_its_own_and_no_change_is_refused(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    first = await call(runtime, "store_memory", content="Backups run nightly.", tags=["ops"])
    second = await call(
        runtime, "update_memory", content_hash=first["content_hash"], tags=["ops", "backup"]
    )
    assert second["version"] == 2 and second["content_hash"] != first["content_hash"]
    with pytest.raises(ToolError) as error:
        await call(runtime, "update_memory", content_hash=second["content_hash"], tags="ops,backup")
    assert "at least one value that differs" in str(error.value)
    history = await call(runtime, "memory_history", content_hash=first["content_hash"])
    assert [row["version"] for row in history["versions"]] == [1, 2]
    assert [row["tags"] for row in history["versions"]] == [["ops"], ["ops", "backup"]]


async def test_history_from_any_version_and_the_loser_of_a_stale_update(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    v1 = await call(runtime, "store_memory", content="The cache lives for 5 minutes.")
    v2 = await call(
        runtime, "update_memory", content_hash=v1["content_hash"], content="Cache TTL: 10 min."
    )
    v3 = await call(runtime, "update_memory", content_hash=v2["content_hash"], memory_type="fact")
    for given in (v1, v2, v3):
        history = await call(runtime, "memory_history", content_hash=given["content_hash"])
        assert history["content_hash"] == given["content_hash"]
        assert [row["content_hash"] for row in history["versions"]] == [
            v1["content_hash"],
            v2["content_hash"],
            v3["content_hash"],
        ]
    with pytest.raises(ToolError) as error:  # v1 is no longer current
        await call(runtime, "update_memory", content_hash=v1["content_hash"], content="Stale.")
    message = str(error.value)
    assert v1["content_hash"][:12] in message and "current version is 3" in message
    assert v3["content_hash"] in message


async def test_store_with_supersedes_and_merge(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime(profiles=["memory"])
    a = await call(runtime, "store_memory", content="Staging needs a ticket.", tags=["staging"])
    b = await call(
        runtime,
        "store_memory",
        content="Staging needs an approval.",
        tags=["staging", "process"],
        memory_type="decision",
    )
    merged = await call(
        runtime, "merge_memories", content_hashes=[a["content_hash"], b["content_hash"]]
    )
    assert merged["version"] == 2
    assert merged["supersedes"] == [a["content_hash"], b["content_hash"]]
    [row] = (await call(runtime, "search", mode="tag", tags="staging"))["memories"]
    assert row["content_hash"] == merged["content_hash"]
    assert row["content"] == "Staging needs an approval."  # the newest member's
    assert row["tags"] == ["staging", "process"] and row["memory_type"] == "decision"
    history = await call(runtime, "memory_history", content_hash=a["content_hash"])
    first_created = history["versions"][0]["created_at"]
    assert row["created_at"] == first_created  # the earliest member's
    later = await call(
        runtime,
        "store_memory",
        content="Staging needs a ticket and an approval.",
        supersedes=[merged["content_hash"][:12]],
    )
    assert later["stored"] and later["version"] == 3
    assert later["supersedes"] == [merged["content_hash"]]
    assert await hashes(runtime, mode="tag", tags="staging", include_superseded=True) != []
    assert await hashes(runtime, query="staging approval") == [later["content_hash"]]
    with pytest.raises(ToolError) as error:
        await call(
            runtime, "merge_memories", content_hashes=[b["content_hash"], later["content_hash"]]
        )
    assert "is not current" in str(error.value) and "current version is 3" in str(error.value)
    with pytest.raises(ToolError) as error:
        await call(runtime, "merge_memories", content_hashes=[later["content_hash"]] * 2)
    assert "two or more different memories" in str(error.value)


async def test_expired_memories_are_hidden_unless_asked(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    gone = await call(runtime, "store_memory", content="Freeze until the release.", expires_at=PAST)
    kept = await call(
        runtime, "store_memory", content="Freeze lifted.", expires_at="2999-01-01T00:00:00+02:00"
    )
    assert await hashes(runtime) == [kept["content_hash"]]
    shown = await hashes(runtime, include_expired=True)
    assert set(shown) == {gone["content_hash"], kept["content_hash"]}
    history = await call(runtime, "memory_history", content_hash=kept["content_hash"])
    assert history["versions"][0]["expires_at"] == "2998-12-31T22:00:00Z"
    renewed = await call(
        runtime, "update_memory", content_hash=gone["content_hash"], expires_at="2999-01-01T00:00Z"
    )
    assert set(await hashes(runtime)) == {kept["content_hash"], renewed["content_hash"]}
    for bad in ("2026-03-01T00:00:00", "tomorrow", "2026-03-01"):
        with pytest.raises(ToolError) as error:
            await call(runtime, "store_memory", content="Bad expiry.", expires_at=bad)
        assert "'expires_at'" in str(error.value) and "zone" in str(error.value)


async def test_memories_stored_before_versions_are_current_first_versions(
    make_runtime: Callable[..., Runtime],
) -> None:
    """Points without the version keys (as earlier releases wrote them) are searched, listed
    and updated like current first versions."""
    runtime = make_runtime(profiles=["memory"])
    await call(runtime, "store_memory", content="A memory of today.")  # creates the collection
    memory = make_memory(
        "An old memory without versions.", ["legacy"], None, "2025-01-02T03:04:05Z"
    )
    [vector] = runtime.embedder.embed_texts([memory.content])
    point = memory_point(memory, vector, runtime.backend.has_keywords(COLLECTION))
    for key in ("version", "lineage", "supersedes", "superseded_by", "updated_at", "expires_at"):
        del point.payload[key]
    del point.payload["expires_ts"]
    runtime.backend.upsert_points(COLLECTION, [point])
    found = await call(runtime, "search", mode="tag", tags="legacy")
    [row] = found["memories"]
    assert row["version"] == 1 and row["updated_at"] == row["created_at"]
    new = await call(runtime, "update_memory", content_hash=memory.content_hash, tags="legacy,new")
    history = await call(runtime, "memory_history", content_hash=new["content_hash"])
    assert [r["version"] for r in history["versions"]] == [1, 2]
    assert history["versions"][0]["superseded_by"] == new["content_hash"]


def test_write_if_is_a_compare_and_set(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime(profiles=["memory"])
    memory = make_memory("Compare and set.")
    [vector] = runtime.embedder.embed_texts([memory.content])
    backend = runtime.backend
    from scoperag.core.engine.collections import prepare_for_writing

    prepare_for_writing(backend, runtime.embedder, COLLECTION, [])
    point = memory_point(memory, vector, backend.has_keywords(COLLECTION))
    absent = models.Filter(must=[models.HasIdCondition(has_id=[point.id])])
    backend.write_if(COLLECTION, absent, 0, [point], {})
    assert backend.count(COLLECTION, None) == 1
    with pytest.raises(ConflictError) as error:  # the same guard again: now 1 point matches it
        backend.write_if(COLLECTION, absent, 0, [point], {point.id: {"tags": ["lost"]}})
    assert "1 points" in str(error.value) and "nothing was written" in str(error.value)
    backend.write_if(COLLECTION, absent, 1, [], {point.id: {"tags": ["set"]}})
    [record] = backend.scroll(COLLECTION, None, 10)
    assert record.payload["tags"] == ["set"]


def test_cli_update_history_merge_list_and_prune(
    cli_with_shared_model: CliRunner, tmp_path: Path
) -> None:
    runner = cli_with_shared_model
    items = [
        {"content": "Lunch is at noon.", "tags": ["office"]},
        {"content": "Lunch is at one.", "tags": ["office", "food"]},
        {"content": "The office closes in August.", "expires_at": PAST},
    ]
    (tmp_path / "m.json").write_text(json.dumps(items))
    assert runner.invoke(cli, ["ingest", "memory", str(tmp_path / "m.json")]).exit_code == 0
    noon, one, august = (content_hash(item["content"]) for item in items)

    updated = runner.invoke(
        cli, ["memory", "update", noon[:8], "--content", "Lunch is at 12:30.", "--json"]
    )
    assert updated.exit_code == 0, updated.output
    new = json.loads(updated.output)
    assert new["version"] == 2 and new["supersedes"] == [noon]
    history = runner.invoke(cli, ["memory", "history", noon])
    assert history.exit_code == 0, history.output
    assert (
        history.output.startswith(f"v1 {noon[:12]}")
        and f"v2 {new['content_hash'][:12]}" in history.output
    )
    stale = runner.invoke(cli, ["memory", "update", noon, "--type", "fact"])
    assert stale.exit_code == 1 and "current version is 2" in stale.output
    merged = runner.invoke(cli, ["memory", "merge", new["content_hash"], one[:10], "--json"])
    assert merged.exit_code == 0, merged.output
    assert json.loads(merged.output)["version"] == 3

    listed = runner.invoke(cli, ["list", "memory", "--json"])
    assert listed.exit_code == 0, listed.output
    [data] = json.loads(listed.output)["profiles"]
    assert data["points"] == 5
    assert data["states"] == {"current": 1, "superseded": 3, "expired": 1}
    assert "current 1, superseded 3, expired 1" in runner.invoke(cli, ["list", "memory"]).output

    refused = runner.invoke(cli, ["prune", "memory", "--expired"], input="n\n")
    assert refused.exit_code == 1 and august[:12] in refused.output
    assert "Delete these 1 expired memories?" in refused.output
    pruned = runner.invoke(cli, ["prune", "memory", "--expired", "--yes"])
    assert pruned.exit_code == 0 and "Deleted 1 expired memories." in pruned.output
    again = runner.invoke(cli, ["prune", "memory", "--expired", "--yes"])
    assert "No memory has expired." in again.output
    assert runner.invoke(cli, ["prune", "memory"]).exit_code == 2


async def test_a_writer_whose_version_was_replaced_meanwhile_loses_at_the_write(
    make_runtime: Callable[..., Runtime],
) -> None:
    """The compare-and-set itself: a writer that read the memory as current, then lost the
    race before writing, gets the conflict from `write_if` and writes nothing."""
    from scoperag.server.profiles.memory.versions import MemoryVersions

    runtime = make_runtime(profiles=["memory"])
    first = await call(runtime, "store_memory", content="Release on Monday.")
    versions = MemoryVersions(runtime)
    [read] = versions.current([first["content_hash"]])  # the late writer reads it first
    won = await call(runtime, "update_memory", content_hash=read["content_hash"], content="Tue.")
    late = make_memory("Release on Wednesday.")
    with pytest.raises(ConflictError) as error:
        versions.write(late, [read], read)
    assert f"current version is 2 ({won['content_hash']})" in str(error.value)
    history = await call(runtime, "memory_history", content_hash=first["content_hash"])
    assert [row["content"] for row in history["versions"]] == ["Release on Monday.", "Tue."]
    assert runtime.backend.count(COLLECTION, None) == 2
