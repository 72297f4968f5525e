"""find_duplicates: same text and look-alike embeddings grouped (MCP tool, CLI, docs example)."""

from __future__ import annotations

import functools
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastmcp import Client
from fastmcp.exceptions import ToolError

from scoperag.core.embedding.embedders import Embedder
from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

# Stored in this order (each newer than the one before); cosines with the packaged model:
# A1-A2 0.952, A3 to them 0.85, B1-B2 0.964, every other pair below 0.42.
MEMORIES = [
    ("We moved deploys to Thursdays.", ["ops"], "decision"),  # A1
    ("Deploys were moved to Thursdays.", ["ops"], "decision"),  # A2
    ("Deployments now happen on Thursdays.", ["team"], "note"),  # A3
    ("The staging database is backed up every night.", ["db"], "note"),  # B1
    ("Every night the staging database gets backed up.", ["db"], "note"),  # B2
    ("Use ruff for linting Python code.", ["python"], "learning"),
    ("Elizabeth walked to Netherfield in the rain.", ["books"], "note"),
]
A1, A2, A3, B1, B2 = (text for text, _, _ in MEMORIES[:5])
DOCS = Path(__file__).resolve().parents[1] / "docs" / "memory.md"


async def find(runtime: Runtime, **arguments: Any) -> dict[str, Any]:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool("find_duplicates", arguments)
    return result.structured_content


def texts(result: dict[str, Any]) -> list[list[str]]:
    """Each group's members' texts, in the order given."""
    return [[member["content"] for member in group["members"]] for group in result["groups"]]


@pytest.fixture(scope="module")
def stored(make_runtime: Callable[..., Runtime]) -> Runtime:
    """A runtime whose store holds MEMORIES (one per engine under test)."""
    import asyncio

    runtime = make_runtime(profiles=["memory"])

    async def store() -> None:
        async with Client(build_server(runtime)) as client:
            for content, tags, kind in MEMORIES:
                arguments = {"content": content, "tags": tags, "memory_type": kind}
                await client.call_tool("store_memory", arguments)

    asyncio.run(store())
    return runtime


async def test_same_text_in_other_case_and_spacing_is_one_group(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    async with Client(build_server(runtime)) as client:
        for content in ["Deploys happen on Thursdays.", "deploys   HAPPEN on\tthursdays.", A1]:
            await client.call_tool("store_memory", {"content": content})
    result = await find(runtime)
    assert result["total_groups"] == 1 and result["note"] is None
    [group] = result["groups"]
    assert group["reason"] == "same text"
    assert [m["content"] for m in group["members"]] == [
        "deploys   HAPPEN on\tthursdays.",  # the newest first
        "Deploys happen on Thursdays.",
    ]
    assert [m["similarity"] for m in group["members"]] == [1.0, 1.0]
    assert all(len(m["content_hash"]) == 64 and m["created_at"] for m in group["members"])


async def test_paraphrases_above_the_threshold_are_grouped_and_unrelated_ones_not(
    stored: Runtime, embedder: Embedder
) -> None:
    result = await find(stored)
    assert result["total_groups"] == 2
    assert texts(result) == [[B2, B1], [A2, A1]]  # equal sizes: the newest group first
    assert {group["reason"] for group in result["groups"]} == {"similar"}
    wider = await find(stored, threshold=0.84)
    assert texts(wider) == [[A3, A2, A1], [B2, B1]]  # the largest first
    vectors = dict(zip([A1, A2, A3], embedder.embed_texts([A1, A2, A3]), strict=True))
    for member in wider["groups"][0]["members"]:
        assert member["similarity"] == pytest.approx(
            cosine(vectors[A3], vectors[member["content"]]), abs=1e-3
        )
    assert wider["groups"][0]["members"][0]["similarity"] == 1.0
    strict = await find(stored, threshold=0.97)
    assert strict["groups"] == [] and strict["total_groups"] == 0
    assert strict["note"] == "No duplicates among 7 memories at threshold 0.97."


async def test_a_chain_of_look_alikes_is_one_group(stored: Runtime, embedder: Embedder) -> None:
    """With a threshold between A3-A1 and the two links A3-A2 and A2-A1 (0.852 < 0.857, 0.952
    with the packaged model; the threshold is taken from the cosines the model gives): one
    group through A2, where A1 shows its own similarity to the newest (A3), below it."""
    vectors = dict(zip([A1, A2, A3], embedder.embed_texts([A1, A2, A3]), strict=True))
    far, links = (
        cosine(vectors[A3], vectors[A1]),
        [
            cosine(vectors[A3], vectors[A2]),
            cosine(vectors[A2], vectors[A1]),
        ],
    )
    assert far < min(links) - 2e-3  # the premise: A1 is nearer A2 than A3 is
    threshold = round((far + min(links)) / 2, 4)
    [group, _] = (await find(stored, threshold=threshold))["groups"]
    assert [m["content"] for m in group["members"]] == [A3, A2, A1]
    similarities = [m["similarity"] for m in group["members"]]
    assert similarities[0] == 1.0 and similarities[1] >= threshold > similarities[2]
    assert similarities[2] == pytest.approx(far, abs=1e-3)


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


async def test_limit_tags_and_type_narrow_the_groups(stored: Runtime) -> None:
    first = await find(stored, limit=1)
    assert texts(first) == [[B2, B1]] and first["total_groups"] == 2
    assert first["note"] == "The 1 largest of 2 groups; raise limit to see more."
    assert texts(await find(stored, threshold=0.84, tags=["ops"])) == [[A2, A1]]
    assert texts(await find(stored, threshold=0.84, tags="db, python")) == [[B2, B1]]
    assert texts(await find(stored, threshold=0.84, memory_type="decision")) == [[A2, A1]]
    none = await find(stored, tags=["nothing-has-this"])
    assert none["groups"] == [] and none["note"] == "No memory has these tags and type."
    empty = await find(stored, tags=[])
    assert empty["groups"] == [] and "empty list" in empty["note"]


async def test_a_process_attached_to_the_store_gets_the_same_groups(
    stored: Runtime, embedder: Embedder
) -> None:
    """The engine's neighbour search crosses the owner's socket (`neighbours` is a read)."""
    attached = Runtime(stored.settings, embedder=embedder)
    try:
        assert (stored.backend.role, attached.backend.role) == ("owner", "attached")
        here = await find(stored, threshold=0.84)
        assert here["groups"]
        assert await find(attached, threshold=0.84) == here
    finally:
        attached.close()


@pytest.mark.parametrize("threshold", [0, -0.5, 1.01, 2])
async def test_a_threshold_outside_zero_to_one_is_refused(
    stored: Runtime, threshold: float
) -> None:
    with pytest.raises(ToolError) as refused:
        await find(stored, threshold=threshold)
    message = str(refused.value)
    assert f"Invalid value for 'threshold': {json.dumps(threshold)}" in message
    assert "greater than 0 and at most 1" in message


async def test_threshold_one_is_accepted(stored: Runtime) -> None:
    result = await find(stored, threshold=1)
    assert result["total_groups"] == 0 and result["note"]


async def test_an_empty_store_has_no_groups_and_says_why(
    make_runtime: Callable[..., Runtime],
) -> None:
    result = await find(make_runtime(profiles=["memory"]))
    assert result == {
        "groups": [],
        "total_groups": 0,
        "note": "No memories are stored yet, so there is nothing to compare.",
    }


def test_cli_lists_groups_readably_and_as_json(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(
        "scoperag.server.runtime.Runtime", functools.partial(Runtime, embedder=embedder)
    )
    items = [{"content": text, "tags": tags, "memory_type": kind} for text, tags, kind in MEMORIES]
    path = tmp_path / "memories.json"
    path.write_text(json.dumps(items))
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", "memories", str(path)]).exit_code == 0
    shown = runner.invoke(cli, ["memory", "duplicates", "--threshold", "0.84", "--tags", "ops"])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0] == "group 1: 2 memories, similar"
    assert re.fullmatch(r"  [0-9a-f]{12}  1\.000  \d{4}-\d\d-\d\d  " + re.escape(A2), lines[1])
    assert re.fullmatch(r"  [0-9a-f]{12}  0\.95\d  \d{4}-\d\d-\d\d  " + re.escape(A1), lines[2])
    assert "1 group" in lines
    as_json = runner.invoke(cli, ["memory", "duplicates", "--type", "note", "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert texts(json.loads(as_json.output)) == [[B2, B1]]
    refused = runner.invoke(cli, ["memory", "duplicates", "--threshold", "1.5"])
    assert refused.exit_code == 1 and "Invalid value for 'threshold': 1.5" in refused.output


def test_the_docs_example_runs(tmp_path: Path) -> None:
    """The find_duplicates section of docs/memory.md, run as written."""
    section = DOCS.read_text(encoding="utf-8").split("### Find duplicates")[1].split("\n### ")[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert blocks, "the section has no Python example"
    script = tmp_path / "example.py"
    script.write_text("\n".join(blocks), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("SCOPERAG_")}
    env["SCOPERAG_DATA_DIR"] = str(tmp_path / "data")
    env["SCOPERAG_IN_PROCESS"] = "1"  # no resident engine left behind (tests/conftest.py)
    ran = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "same text" in ran.stdout and "similar" in ran.stdout


async def test_superseded_and_expired_memories_are_not_compared(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    async with Client(build_server(runtime)) as client:
        first = await client.call_tool("store_memory", {"content": A1})
        await client.call_tool("store_memory", {"content": A2})
        before = await find(runtime)
        assert texts(before) == [[A2, A1]]  # the look-alikes are grouped while both are current
        old = first.structured_content["content_hash"]
        await client.call_tool("update_memory", {"content_hash": old, "content": B1})
        past = {"content": B2, "expires_at": "2000-01-01T00:00:00Z"}
        await client.call_tool("store_memory", past)
    after = await find(runtime)
    assert after["groups"] == [] and after["total_groups"] == 0
