"""`scoperag list` / `delete`, the `qdrant-delete-document` tool and configuration messages,
on every engine, over the bundled samples of each profile."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from click.testing import CliRunner
from fastmcp import Client
from fastmcp.exceptions import ToolError

from scoperag.core.errors import ScoperagError
from scoperag.pipelines.book import ingest_book
from scoperag.pipelines.docs import ingest_docs_jsonl
from scoperag.pipelines.memories import import_memories
from scoperag.server.cli.main import cli
from scoperag.server.data_admin import delete, list_store, planned_deletion
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.dnd import service as dnd_service
from scoperag.server.profiles.pdf import service as pdf_service
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES

SMALL_PDF = SAMPLES / "qpdf-page-labels-num-tree.pdf"


def _stocked(make_runtime: Callable[..., Runtime]) -> Runtime:
    """A store holding every profile's bundled sample (the book cut to its first chapter)."""
    runtime = make_runtime()
    backend, embedder = runtime.backend, runtime.embedder
    pdf_service.ingest_paths(runtime, [SMALL_PDF], None, None)
    book = SAMPLES / "pride-and-prejudice-ch1-3.txt"
    ingest_book(book, backend, embedder, "pride", last_chapter=1)
    import_memories(SAMPLES / "memories.json", backend, embedder)
    dnd_service.ingest_paths(runtime, [SAMPLES / "dnd"], None)
    ingest_docs_jsonl(SAMPLES / "docs.jsonl", backend, embedder)
    return runtime


@pytest.fixture
def stocked(make_runtime: Callable[..., Runtime]) -> Runtime:
    return _stocked(make_runtime)


@pytest.fixture(scope="session")
def shared_stock(make_runtime: Callable[..., Runtime]) -> Runtime:
    """One stocked store per engine for tests that each delete a different profile's data."""
    return _stocked(make_runtime)


def _groups(runtime: Runtime) -> dict[str, dict[str, dict[str, int]]]:
    listing = list_store(runtime.backend, runtime.settings)
    return {data.profile: data.groups for data in listing.profiles}


def test_listing_counts_every_profile_and_names_the_embedder(stocked: Runtime) -> None:
    listing = list_store(stocked.backend, stocked.settings)
    assert listing.collections == ["books", "dnd", "docs", "memories", "pdf_pages"]
    by_profile = {data.profile: data for data in listing.profiles}
    assert all(
        data.embedder and "all-MiniLM-L6-v2 (384-d)" in data.embedder
        for data in by_profile.values()
    )
    groups = _groups(stocked)
    assert list(groups["pdf"]["documents"]) == ["qpdf-page-labels-num-tree"]
    assert list(groups["books"]["books"]) == ["pride"]
    assert groups["memory"]["tags"]["decision"] == 2 and groups["memory"]["types"]["note"] == 2
    assert groups["dnd"]["documents"] == {"wotc-srd": 16}
    assert len(groups["docs"]["documents"]) == 12
    for data in by_profile.values():  # the groups add up to the points stored
        first = next(iter(data.groups.values()))
        assert data.profile == "memory" or sum(first.values()) == data.points


@pytest.mark.parametrize(
    ("kind", "name", "profile", "group"),
    [
        ("pdf", "qpdf-page-labels-num-tree", "pdf", "documents"),
        ("books", "pride", "books", "books"),
        ("tag", "decision", "memory", "tags"),
        ("dnd", "wotc-srd", "dnd", "documents"),
        ("docs", "runbook-search-indexer-00009", "docs", "documents"),
    ],
)
def test_delete_removes_exactly_what_it_names(
    shared_stock: Runtime, kind: str, name: str, profile: str, group: str
) -> None:
    stocked = shared_stock
    before = _groups(stocked)
    points = planned_deletion(stocked.backend, stocked.settings, kind, name).points
    report = delete(stocked.backend, stocked.settings, kind, name)
    after = _groups(stocked)
    assert report.points_deleted == points == before[profile][group][name]
    assert name not in after[profile][group]
    others = {k: v for k, v in before[profile][group].items() if k != name}
    if kind != "tag":  # other tags of the deleted memories lose counts too
        assert after[profile][group] == others
    assert {p: g for p, g in after.items() if p != profile} == {
        p: g for p, g in before.items() if p != profile
    }


def test_memory_by_hash_and_whole_collection(stocked: Runtime) -> None:
    backend, settings = stocked.backend, stocked.settings
    record = backend.scroll("memories", None, limit=1)[0]
    report = delete(backend, settings, "memory", record.payload["content_hash"])
    assert report.points_deleted == 1 and sum(_groups(stocked)["memory"]["types"].values()) == 4
    report = delete(backend, settings, "collection", "dnd")
    assert report.points_deleted == 16 and "dnd" not in backend.list_collections()
    assert not list_store(backend, settings).profiles[3].exists


def test_a_memory_is_deleted_by_a_unique_prefix_of_its_hash(stocked: Runtime) -> None:
    backend, settings = stocked.backend, stocked.settings
    stored = sorted(list_store(backend, settings, ["memory"], hashes=True).profiles[0].hashes)
    assert len(stored) == 5 and all(len(h) == 64 for h in stored)
    report = delete(backend, settings, "memory", stored[0][:8])
    assert (report.id, report.points_deleted) == (stored[0], 1)
    with pytest.raises(ScoperagError, match="No memory .* is stored. Stored: [0-9a-f]{12}, "):
        delete(backend, settings, "memory", stored[0][:8])


def test_an_ambiguous_hash_prefix_names_a_few_matches(stocked: Runtime) -> None:
    backend, settings = stocked.backend, stocked.settings
    path = stocked.settings.data_dir / "more.json"  # 17 memories: some share a first digit
    path.write_text(json.dumps([{"content": f"extra memory {n}"} for n in range(12)]))
    import_memories(path, backend, stocked.embedder)
    hashes = sorted(list_store(backend, settings, ["memory"], hashes=True).profiles[0].hashes)
    prefix = next(p for p in "0123456789abcdef" if sum(h.startswith(p) for h in hashes) > 1)
    matches = [h for h in hashes if h.startswith(prefix)]
    with pytest.raises(ScoperagError) as caught:
        planned_deletion(backend, settings, "memory", prefix)
    message = str(caught.value)
    assert message.startswith(f'{len(matches)} memory (content_hash) start with "{prefix}": ')
    assert matches[0][:12] in message and matches[0] not in message
    assert message.count(", ") < 5 and "Give more characters" in message


@pytest.mark.parametrize(("kind", "name"), [("book", "pride"), ("collection", "memories")])
def test_older_spellings_and_collection_names_name_a_profile(
    stocked: Runtime, kind: str, name: str
) -> None:
    report = delete(stocked.backend, stocked.settings, kind, name)
    assert report.points_deleted > 0


def test_unknown_names_are_errors_listing_what_exists(shared_stock: Runtime) -> None:
    backend, settings = shared_stock.backend, shared_stock.settings
    with pytest.raises(ScoperagError, match='No docs document "nope" is stored. Stored: api-'):
        delete(backend, settings, "docs", "nope")
    with pytest.raises(ScoperagError, match='No D&D document "srd" is stored'):
        delete(backend, settings, "dnd", "srd")
    with pytest.raises(
        ScoperagError, match="'profile': \"nope\". Accepted: pdf, books, .*memories"
    ):
        delete(backend, settings, "collection", "nope")
    assert backend.count("docs", None) > 0  # nothing was deleted on the way


async def test_delete_document_tool_is_destructive_and_deletes_by_id(stocked: Runtime) -> None:
    async with Client(build_server(stocked)) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        hints = tools["qdrant-delete-document"].annotations
        assert hints.destructiveHint is True and hints.readOnlyHint is False
        with pytest.raises(ToolError, match="Stored: qpdf-page-labels-num-tree"):
            await client.call_tool("qdrant-delete-document", {"document_id": "missing"})
        result = await client.call_tool(
            "qdrant-delete-document", {"document_id": "qpdf-page-labels-num-tree"}
        )
        listed = await client.call_tool("qdrant-list-documents", {})
    assert result.structured_content["points_deleted"] > 0
    assert listed.structured_content["documents"] == []


def test_cli_asks_before_deleting_and_reports_json(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime(profiles=["memory"])
    import_memories(SAMPLES / "memories.json", runtime.backend, runtime.embedder)
    runtime.close()
    env = {"SCOPERAG_DATA_DIR": str(runtime.settings.data_dir)}
    env["SCOPERAG_BACKEND"] = runtime.settings.effective_backend
    env["SCOPERAG_PROFILES"] = "memory"
    runner = CliRunner()
    refused = runner.invoke(cli, ["delete", "tag", "storage"], input="n\n", env=env)
    assert refused.exit_code == 1 and "(2 points)?" in refused.output
    listed = runner.invoke(cli, ["list", "--json"], env=env)
    assert '"storage": 2' in listed.output
    done = runner.invoke(cli, ["delete", "tag", "storage", "--yes", "--json"], env=env)
    assert done.exit_code == 0 and '"points_deleted": 2' in done.output
    missing = runner.invoke(cli, ["delete", "tag", "storage", "--yes"], env=env)
    assert missing.exit_code == 1 and 'No memories tagged "storage" is stored' in missing.output
    hashes = runner.invoke(cli, ["list", "memories", "--hashes"], env=env)
    assert (
        hashes.exit_code == 0 and len(re.findall(r"^  [0-9a-f]{12}  \w", hashes.output, re.M)) == 3
    )


def test_each_profile_has_one_name_in_the_commands() -> None:
    runner = CliRunner()
    for group in ("ingest", "search"):
        listing = runner.invoke(cli, [group, "--help"]).output.split("Commands:")[1]
        assert sorted(line.split()[0] for line in listing.strip().splitlines()) == sorted(
            ["pdf", "books", "memory", "dnd", "docs"]
        )
    usage = runner.invoke(cli, ["delete", "--help"]).output
    assert "{pdf|books|memory|dnd|docs|tag|collection}" in usage
    samples = runner.invoke(cli, ["samples"]).output
    assert "ingest books " in samples and "ingest memory " in samples
    assert runner.invoke(cli, ["samples", "memories"]).output.strip().endswith("memories.json")


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (
            ["serve", "--profiles", "pdf,nope"],
            {},
            ["--profiles='pdf,nope': unknown profile(s) nope"],
        ),
        (["list"], {"SCOPERAG_PROFILES": "pdf,x"}, ["SCOPERAG_PROFILES='pdf,x': unknown profile"]),
        (["path"], {"SCOPERAG_BACKEND": "foo"}, ["SCOPERAG_BACKEND='foo': ", "'local'", "'edge'"]),
        (["config"], {"SCOPERAG_EMBED_DIMENSIONS": "0"}, ["SCOPERAG_EMBED_DIMENSIONS='0': ", " 1"]),
    ],
)
def test_configuration_errors_are_one_line(args: list[str], env: dict, expected: list[str]) -> None:
    """Regression: errors printed pydantic's multi-line dump with its URL, and `serve --profiles`
    blamed SCOPERAG_PROFILES. Each line names the setting, its value and (where they are few)
    the values accepted; the rest of the wording is pydantic's."""
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert all(part in result.output for part in expected), result.output
    assert "pydantic" not in result.output and "Traceback" not in result.output


async def test_instructions_describe_only_enabled_profiles() -> None:
    from scoperag.core.config.settings import Settings

    server = build_server(Runtime(Settings(profiles=["memory", "docs"])))
    async with Client(server) as client:
        instructions = client.instructions or ""
        tools = {tool.name for tool in await client.list_tools()}
    assert "memories" in instructions and "shared documents" in instructions
    assert "PDF" not in instructions and "book" not in instructions and "D&D" not in instructions
    assert "qdrant-find" not in tools and "store_memory" in tools


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"SCOPERAG_FILTERABLE_FIELDS": "[bad"}, "SCOPERAG_FILTERABLE_FIELDS is not valid JSON"),
        ({"SCOPERAG_FIELDS_FILE": "/no/such/fields.toml"}, "SCOPERAG_FIELDS_FILE /no/such/"),
    ],
)
def test_setup_errors_of_serve_are_one_line(
    env: dict, expected: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Regression: a bad SCOPERAG_FILTERABLE_FIELDS or SCOPERAG_FIELDS_FILE ended `serve` with a
    traceback (raised while the server was built, outside the command's error handling)."""
    from scoperag.server.cli.main import main

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.argv", ["scoperag", "serve", "--profiles", "pdf"])
    with pytest.raises(SystemExit) as exit_:
        main()
    err = capsys.readouterr().err
    assert exit_.value.code == 1 and err.startswith("Error: ") and expected in err
    assert err.count("\n") == 1 and "Traceback" not in err
