"""The real `scoperag serve` process over stdio, and start-up without the model or the store."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.pdf.service import ingest_paths
from scoperag.server.runtime import Runtime


def _serve(data_dir: Path, *extra: str) -> StdioTransport:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "pdf"}
    return StdioTransport(command=script, args=["serve", *extra], env=env, keep_alive=False)


@pytest.fixture
def ingested_dir(
    make_runtime: Callable[..., Runtime], shared_data: Path, tmp_path: Path, backend_name: str
) -> Path:
    if backend_name == "server":
        pytest.skip("the stdio server test reads an embedded store")
    runtime = make_runtime(profiles=["pdf"], data_dir=tmp_path / "store")
    ingest_paths(runtime, [shared_data / "pdf" / "qpdf-page-labels-num-tree.pdf"], None, None)
    runtime.close()  # release the embedded store for the server process
    return runtime.settings.data_dir


async def test_filters_over_stdio(ingested_dir: Path, backend_name: str) -> None:
    transport = _serve(ingested_dir)
    transport.env["SCOPERAG_BACKEND"] = backend_name
    async with Client(transport) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert "qdrant-find" in names
        result = await client.call_tool(
            "qdrant-find",
            {"query": "Potato", "document_id": "qpdf-page-labels-num-tree", "page_label": "q.7"},
        )
        hits = result.structured_content["hits"]
        assert [(h["physical_page_index"], h["page_label"]) for h in hits] == [(16, "q.7")]
        bad = await client.call_tool(
            "qdrant-find", {"query": "x", "physical_page_index": "abc"}, raise_on_error=False
        )
        assert bad.is_error and "physical_page_index" in bad.content[0].text


async def test_tools_list_loads_neither_model_nor_store(tmp_path: Path) -> None:
    runtime = Runtime()
    async with Client(build_server(runtime)) as client:
        assert await client.list_tools()
    assert "embedder" not in runtime.__dict__ and "backend" not in runtime.__dict__
    assert not (tmp_path / "data").exists()  # nothing was opened under the data dir


def test_listing_every_profile_imports_neither_llamaindex_nor_qdrant_client() -> None:
    """Start-up stays quick: the CLI (what `scoperag serve` runs) and the server list their
    tools before any handler or command imports its libraries (qdrant-client's package alone
    takes 0.7 s to import); handlers and their libraries load on the first call, and the
    listed schemas are self-contained as built (inlining their `$ref`s at list time
    imported jsonref and requests, 0.1 s, before the first `tools/list` could answer; reading
    the ingest tools' descriptions from docstrings imported griffe, 0.1 s more; FastMCP's
    session state checked its own types with beartype, 0.2 s of the first list)."""
    import subprocess

    probe = (
        "import asyncio, sys; from fastmcp import Client; "
        "import scoperag.server.cli.main; from scoperag.server.mcp.app import build_server\n"
        "async def listed():\n"
        "    async with Client(build_server()) as client:\n"
        "        return await client.list_tools()\n"
        "assert len(asyncio.run(listed())) > 20\n"
        "print(sorted(m for m in ('llama_index.core', 'qdrant_client', 'torch', 'pypdf', "
        "'jsonref', 'griffe') if m in sys.modules), sys.modules['key_value.aio'].strategy)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "BeartypeStrategy.O0"]


def test_the_handlers_leave_the_pdf_reader_to_ingestion() -> None:
    """Pypdf is a quarter of a second of a first answer's imports; only ingesting
    reads PDFs, so importing every profile's handlers (what the warm-up does) leaves it out."""
    import subprocess

    services = ["pdf", "memory", "books", "dnd", "docs"]
    probe = (
        "import importlib, sys; "
        "[importlib.import_module(f'scoperag.server.profiles.{p}.service') "
        f"for p in {services!r}]; "
        "print('pypdf' in sys.modules, 'scoperag.server.profiles.pdf.service' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
