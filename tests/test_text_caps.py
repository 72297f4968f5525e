"""Sources that are not text are refused by named caps before they are split or embedded: NUL
runs (a binary file, or UTF-16), and a stretch with no sentence end longer than
SCOPERAG_MAX_SENTENCE_CHARS. Through the CLI and MCP on real stores."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastmcp import Client

from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

PROSE = "It was a bright cold day in April. The clocks were striking thirteen.\n\n"
SOURCES = {
    "nul.txt": (b"\x00" * (2 << 20), "NUL characters"),
    "utf16.txt": (PROSE.encode("utf-16-le") * 50, "NUL characters"),
    "one-sentence.txt": (("word " * 60_000).encode(), "SCOPERAG_MAX_SENTENCE_CHARS"),
}


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_cli_refuses_a_book_that_is_not_text(
    name: str, tmp_path: Path, cli_with_shared_model: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, reason = SOURCES[name]
    path = tmp_path / name
    path.write_bytes(data)
    monkeypatch.setenv("SCOPERAG_PROFILES", "books")
    result = cli_with_shared_model.invoke(cli, ["ingest", "books", str(path), "--book-id", "b"])
    assert result.exit_code == 1 and reason in result.output, result.output
    assert "Traceback" not in result.output
    listed = cli_with_shared_model.invoke(cli, ["list", "books"])
    assert listed.exit_code == 0 and "nothing ingested" in listed.output, listed.output


async def test_mcp_refuses_one_sentence_of_megabytes_and_takes_prose(
    make_runtime: Callable[..., Runtime], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCOPERAG_MAX_SENTENCE_CHARS", "1000")
    runtime = make_runtime(profiles=["books"], allowed_dirs=[tmp_path])
    (tmp_path / "long.txt").write_text("a" * 5_000 + ".", encoding="utf-8")
    (tmp_path / "prose.txt").write_text(PROSE * 3, encoding="utf-8")
    async with Client(build_server(runtime)) as client:
        refused = await client.call_tool(
            "ingest_book",
            {"path": str(tmp_path / "long.txt"), "book_id": "l"},
            raise_on_error=False,
        )
        taken = await client.call_tool(
            "ingest_book", {"path": str(tmp_path / "prose.txt"), "book_id": "p"}
        )
    assert refused.is_error and "5,000 characters with no sentence end" in refused.content[0].text
    assert "SCOPERAG_MAX_SENTENCE_CHARS" in refused.content[0].text
    assert taken.structured_content["sentences"] == 6
