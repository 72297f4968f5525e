"""A file that is not a PDF, named `.pdf`: every ingestion path (the CLI, the MCP tool, the
Python API) skips it with a line in a person's words, and none lets pypdf's own warnings
(`invalid pdf header`, `EOF marker not found`) reach the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastmcp import Client

from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

PARSER_NOISE = ("invalid pdf header", "EOF marker not found", "pypdf")
NOT_A_PDF = "notes.pdf: skipped, not a PDF: it does not start with %PDF."


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A text file named .pdf and a file that starts as a PDF and stops."""
    (tmp_path / "notes.pdf").write_text("hello, this is a text file\n")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 and nothing else")
    return tmp_path


def _quiet(output: str) -> None:
    assert not [noise for noise in PARSER_NOISE if noise in output], output


def test_the_cli_says_what_is_wrong_without_parser_noise(folder: Path, tmp_path: Path) -> None:
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-m", "scoperag", "ingest", "pdf", str(folder)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "skipped 2" in done.stdout + done.stderr
    assert NOT_A_PDF in done.stderr
    assert "broken.pdf: skipped, it is not a readable PDF" in done.stderr
    _quiet(done.stdout + done.stderr)


async def test_the_mcp_tool_says_what_is_wrong_without_parser_noise(
    folder: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from scoperag.core.config.settings import Settings

    settings = Settings(data_dir=tmp_path / "data", profiles=["pdf"], allowed_dirs=[str(folder)])
    runtime = Runtime(settings)
    try:
        async with Client(build_server(runtime)) as client:
            result = await client.call_tool(
                "qdrant-ingest-pdf", {"paths": [str(folder / "notes.pdf")]}, raise_on_error=False
            )
    finally:
        runtime.close()
    report = result.structured_content
    assert report is not None and report["skipped"] == 1
    assert report["files"][0]["error"] == NOT_A_PDF
    captured = capfd.readouterr()
    _quiet(captured.out + captured.err)


def test_the_python_api_says_what_is_wrong_without_parser_noise(
    folder: Path, tmp_path: Path
) -> None:
    """In a process of its own, as a script runs it: pytest's log capture would hide noise."""
    script = (
        "import sys\n"
        "from scoperag import Store\n"
        "with Store(sys.argv[1], profiles=['pdf'], progress=False) as store:\n"
        "    report = store.pdf.ingest(sys.argv[2:])\n"
        "print(report.skipped)\n"
        "for item in report.files:\n"
        "    print(item['error'])\n"
    )
    files = [str(folder / "broken.pdf"), str(folder / "notes.pdf")]
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "data"), *files],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    skipped, broken, not_a_pdf = done.stdout.splitlines()
    assert skipped == "2" and "not a readable PDF" in broken and not_a_pdf == NOT_A_PDF
    _quiet(done.stdout + done.stderr)
