"""`scoperag search`, `scoperag call` and `scoperag tools`: the real CLI on a real store holding
the bundled samples, calling the MCP tools through FastMCP's in-memory client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from scoperag.server.cli.main import cli
from scoperag.server.cli.tool_arguments import parse_value, parse_values
from scoperag.server.samples import SAMPLES


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a data dir holding the small sample PDF, the memories and D&D."""
    env = {"SCOPERAG_DATA_DIR": str(tmp_path_factory.mktemp("cli-store"))}
    reports = tmp_path_factory.mktemp("reports")
    for args in (
        ["pdf", str(SAMPLES / "qpdf-page-labels-num-tree.pdf")],
        ["memories", str(SAMPLES / "memories.json")],
        ["dnd", str(SAMPLES / "dnd")],
    ):
        result = CliRunner().invoke(cli, ["ingest", *args], env=env)
        assert result.exit_code == 0, result.output
        (reports / args[0]).write_text(result.output)
    return {**env, "REPORTS": str(reports)}


def run(store: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=store)


def test_ingest_counts_what_list_counts(store: dict[str, str]) -> None:
    """`ingest dnd` reports the entries (points) `list` then shows, beside the files read."""
    listed = json.loads(run(store, "list", "dnd", "--json").output)["profiles"][0]
    report = (Path(store["REPORTS"]) / "dnd").read_text()
    assert f"ingested {listed['points']} points (items) from 4 files" in report


def test_search_pdf_passes_filters_from_the_tool_schema(store: dict[str, str]) -> None:
    result = run(
        store, "search", "pdf", "Potato", "--physical-page-index", "10", "--limit", "2", "--json"
    )
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)["hits"]
    assert hits and {hit["physical_page_index"] for hit in hits} == {10}


def test_search_prints_one_readable_block_per_hit(store: dict[str, str]) -> None:
    """By default a hit is its rank, score and source on one line, then its text with its
    newlines as newlines (never TOON's escaped `\\n`), wrapped to the terminal."""
    result = run(store, "search", "dnd", "a ball of fire", "--limit", "1")
    assert result.exit_code == 0, result.output
    head, *text = result.output.splitlines()
    assert head.startswith("1. score ") and head.endswith("wotc-srd · spell Fireball")
    assert text[:2] == ["   Fireball", "   Spell"]
    assert "\\n" not in result.output and not result.output.lstrip().startswith("{")
    assert max(len(line) for line in text) <= 80  # CliRunner's terminal: 80 columns


def test_search_says_where_each_hit_came_from(store: dict[str, str]) -> None:
    """pdf: document and page label; memory: hash prefix, type, tags and date."""
    pdf = run(store, "search", "pdf", "Potato", "--physical-page-index", "8", "--limit", "1")
    assert pdf.exit_code == 0, pdf.output
    assert pdf.output.splitlines()[0].endswith("qpdf-page-labels-num-tree, page V (index 8)")
    memory = run(store, "search", "memory", "--tags", "storage", "--mode", "tag")
    assert memory.exit_code == 0, memory.output
    heads = [line for line in memory.output.splitlines() if line[:1].isdigit()]
    assert len(heads) == 2
    for head in heads:
        hash_prefix, _type, tags, date = head.split("memory ")[1].split(" · ")
        assert len(hash_prefix) == 12 and "storage" in tags.split("tags ")[1].split(", ")
        assert date[:2] == "20" and len(date) == 10


def test_search_json_prints_the_tool_result(store: dict[str, str]) -> None:
    result = run(store, "search", "dnd", "a ball of fire", "--limit", "1", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["results"][0]["name"] == "Fireball"


def test_search_accepts_a_collection_name_or_an_older_spelling(store: dict[str, str]) -> None:
    for name in ("memory", "memories"):
        result = run(store, "search", name, "--tags", "storage", "--mode", "tag", "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["total"] == 2


def test_search_help_lists_each_profile_once_with_the_tool_options(
    store: dict[str, str],
) -> None:
    listing = run(store, "search", "--help").output
    assert [line.split()[0] for line in listing.split("Commands:")[1].strip().splitlines()] == [
        "pdf",
        "books",
        "memory",
        "dnd",
        "docs",
    ]
    options = run(store, "search", "pdf", "--help").output
    assert "--document-id" in options and "--page-label" in options


def test_an_unknown_profile_lists_the_profiles_and_tools(store: dict[str, str]) -> None:
    result = run(store, "search", "pdfs", "x")
    assert result.exit_code == 2
    assert "neither a profile (pdf, books, memory, dnd, docs) nor a read-only tool" in result.output
    assert "lookup_spell" in result.output and "Did you mean 'pdf'?" in result.output


def test_search_runs_a_lookup_tool_by_its_name(store: dict[str, str]) -> None:
    result = run(store, "search", "lookup_spell", "fire", "--level", "3", "--json")
    assert result.exit_code == 0, result.output
    assert [hit["name"] for hit in json.loads(result.output)["results"]] == ["Fireball"]
    assert "--level INTEGER" in run(store, "search", "lookup_spell", "--help").output


def test_call_parses_values_as_json(store: dict[str, str]) -> None:
    result = run(store, "call", "lookup_spell", "name=fireball", "limit=1", "level=3", "--json")
    assert result.exit_code == 0, result.output
    assert [hit["name"] for hit in json.loads(result.output)["results"]] == ["Fireball"]


def test_call_reports_the_tools_own_errors(store: dict[str, str]) -> None:
    result = run(store, "call", "search_book", "query=x")
    assert result.exit_code == 1
    assert "Missing required argument 'book_id'" in result.output
    result = run(store, "call", "qdrant-find", "query=x", "limit=0")
    assert result.exit_code == 1
    assert "Invalid value for 'limit': 0." in result.output


def test_call_suggests_the_close_tool_name(store: dict[str, str]) -> None:
    result = run(store, "call", "qdrant_find", "query=x")
    assert result.exit_code == 1
    assert "Unknown tool 'qdrant_find'; did you mean 'qdrant-find'?" in result.output


def test_tools_lists_every_tool_with_its_parameters(store: dict[str, str]) -> None:
    result = run(store, "tools")
    assert result.exit_code == 0, result.output
    assert "qdrant-find query limit? explain? document_id?" in result.output


@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ("5", {"type": "integer"}, 5),
        ("true", {"anyOf": [{"type": "boolean"}, {"type": "null"}]}, True),
        ("null", {"anyOf": [{"type": "string"}, {"type": "null"}]}, None),
        ("2024", {"anyOf": [{"type": "string"}, {"type": "null"}]}, "2024"),
        ("fire spell", {"type": "string"}, "fire spell"),
        ("5", {}, 5),
    ],
)
def test_a_value_is_json_where_it_parses_and_the_parameter_takes_it(
    text: str, schema: dict, expected: object
) -> None:
    assert parse_value(text, schema) == expected


def test_a_list_parameter_collects_repeated_values_or_one_json_list() -> None:
    schema = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}
    assert parse_values(["a", "b"], schema) == ["a", "b"]
    assert parse_values(['["a", "b"]'], schema) == ["a", "b"]
    assert parse_values(["a"], schema) == ["a"]


def test_the_demo_ends_with_the_next_three_commands(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--data-dir", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-3:]
    assert [line.split()[:2] for line in last] == [
        ["scoperag", "ingest"],
        ["scoperag", "search"],
        ["scoperag", "serve"],
    ]


def test_the_console_command_reports_errors_on_stderr_only(store: dict[str, str]) -> None:
    """As a script sees it: the error on stderr, nothing on stdout, exit status 1."""
    env = {**os.environ, **store}
    command = [sys.executable, "-c", "from scoperag.server.cli.main import main; main()"]
    done = subprocess.run(
        [*command, "call", "qdrant_find", "query=x"], env=env, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert "did you mean 'qdrant-find'?" in done.stderr and "Traceback" not in done.stderr
    found = subprocess.run(
        [*command, "search", "dnd", "fireball", "--limit", "1", "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["name"] == "Fireball"


def test_render_hits_is_what_search_prints_at_any_width(store: dict[str, str]) -> None:
    """`render_hits` (the web UI's text too) on the tool's JSON result gives the CLI's blocks;
    narrower, every line fits but a word longer than the width."""
    from scoperag.server.results.listing import render_hits

    args = ("search", "dnd", "a ball of fire", "--limit", "2")
    result = json.loads(run(store, *args, "--json").output)
    assert result["results"]
    assert render_hits("search_dnd_content", result, 80) + "\n" == run(store, *args).output
    narrow = render_hits("search_dnd_content", result, 40).splitlines()
    assert narrow[0].startswith("1. score ") and "Fireball" in narrow[0] + narrow[1]
    assert all(len(line) <= 40 or " " not in line.strip() for line in narrow)
    assert render_hits("search_dnd_content", {"results": [], "message": "Nothing found."}, 80) == (
        "no hits\n\nNothing found."
    )
