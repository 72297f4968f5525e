"""Required payload indexes: `scoperag indexes check|ensure`, `/readyz`, and the server gate.

qdrant-client's local mode keeps no payload indexes, and no Qdrant server runs here, so the
engine that really keeps them is Qdrant Edge (the Qdrant engine in-process). For the gate, which
applies to `backend.name == "server"`, that real Edge engine is relabelled "server".
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from fastmcp import Client
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.docs import COLLECTION, DOCS_FILTERS
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
from scoperag.core.engine.index_status import (
    IndexesMissingError,
    ensure_required,
    index_report,
    refuse_unindexed,
)
from scoperag.server.cli.main import cli
from scoperag.server.http.app import build_http_app
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.docs.tools import SEARCH_PATH
from scoperag.server.runtime import Runtime

DOCS_KEYS = ["scope", "status", "doc_type", "agent_id", "updated_at"]
needs_edge = pytest.mark.skipif(
    importlib.util.find_spec("scoperag.core.engine.edge.backend") is None,
    reason="the Edge engine (the one that keeps payload indexes in-process) is not here",
)


def _runtime(data_dir: Path, engine: str, embedder: Embedder) -> Runtime:
    settings = Settings(data_dir=data_dir, backend=engine, profiles=["pdf", "docs"])
    return Runtime(settings, embedder=embedder)


def _bare_docs_collection(runtime: Runtime, **indexes: models.PayloadSchemaType) -> None:
    """A docs collection made by someone else: no points, only the given indexes."""
    info = runtime.embedder.info
    backend = runtime.backend
    backend.create_collection(COLLECTION, info.dimension, {EMBEDDER_KEY: info.model_dump()})
    for key, schema in indexes.items():
        backend.create_index(COLLECTION, key, schema)


def _indexes_cli(data_dir: Path, engine: str, *args: str) -> tuple[int, str]:
    env = {
        "SCOPERAG_DATA_DIR": str(data_dir),
        "SCOPERAG_BACKEND": engine,
        "SCOPERAG_PROFILES": "pdf,docs",
    }
    result = CliRunner().invoke(cli, ["indexes", *args], env=env)
    return result.exit_code, result.output


@pytest.fixture
def edge_runtime(tmp_path: Path, embedder: Embedder) -> Iterator[Runtime]:
    runtime = _runtime(tmp_path / "store", "edge", embedder)
    yield runtime
    runtime.close()


@needs_edge
def test_check_fails_while_an_index_is_missing_and_ensure_creates_it(
    edge_runtime: Runtime,
) -> None:
    _bare_docs_collection(edge_runtime, scope=models.PayloadSchemaType.KEYWORD)
    edge_runtime.close()  # the CLI opens the store itself
    data_dir = edge_runtime.settings.data_dir
    code, output = _indexes_cli(data_dir, "edge", "check")
    assert code == 1
    assert "docs: scope (keyword) ok, status (keyword) MISSING" in output
    assert "updated_at (datetime) MISSING" in output
    assert "pdf_pages: not created yet" in output
    code, output = _indexes_cli(data_dir, "edge", "check", "--json")
    docs = {c["collection"]: c for c in json.loads(output)["collections"]}["docs"]
    assert (code, docs["missing"], docs["ready"]) == (1, DOCS_KEYS[1:], False)
    code, output = _indexes_cli(data_dir, "edge", "ensure", "--json")
    docs = {c["collection"]: c for c in json.loads(output)["collections"]}["docs"]
    assert (code, docs["created"], docs["missing"]) == (0, DOCS_KEYS[1:], [])
    code, output = _indexes_cli(data_dir, "edge", "check")
    assert code == 0 and "MISSING" not in output
    assert edge_runtime.backend.payload_indexes(COLLECTION) == {
        "scope": "keyword",
        "status": "keyword",
        "doc_type": "keyword",
        "agent_id": "keyword",
        "updated_at": "datetime",
    }


@needs_edge
def test_an_index_of_the_wrong_type_fails_the_check(edge_runtime: Runtime) -> None:
    _bare_docs_collection(edge_runtime, updated_at=models.PayloadSchemaType.KEYWORD)
    report = ensure_required(edge_runtime.backend, edge_runtime.settings)
    docs = {c.collection: c for c in report.collections}["docs"]
    assert docs.wrong_type == {"updated_at": "keyword"}
    assert docs.created == DOCS_KEYS[:4] and not docs.missing
    assert not report.ready


def test_local_mode_has_no_indexes_to_require(tmp_path: Path, embedder: Embedder) -> None:
    runtime = _runtime(tmp_path / "store", "local", embedder)
    _bare_docs_collection(runtime)
    report = index_report(runtime.backend, runtime.settings)
    assert (report.payload_indexes, report.ready) == (False, True)
    refuse_unindexed(runtime.backend, COLLECTION, DOCS_FILTERS)  # not a server: no gate
    runtime.close()
    code, output = _indexes_cli(runtime.settings.data_dir, "local", "check")
    assert code == 0 and "Payload indexes do not apply" in output


@needs_edge
async def test_server_refuses_filtered_traffic_until_indexes_exist(
    edge_runtime: Runtime,
) -> None:
    _bare_docs_collection(edge_runtime, status=models.PayloadSchemaType.KEYWORD)
    backend = edge_runtime.backend
    refuse_unindexed(backend, COLLECTION, DOCS_FILTERS)  # an embedded engine is not gated
    backend.name = "server"  # the real engine, standing in for a Qdrant server
    with pytest.raises(IndexesMissingError) as refused:
        refuse_unindexed(backend, COLLECTION, DOCS_FILTERS)
    assert refused.value.missing == ["scope", "doc_type", "agent_id", "updated_at"]

    app = build_http_app(edge_runtime, build_server(edge_runtime))
    call = {"query": "rotate the keys", "scope": "org_shared"}
    transport = httpx.ASGITransport(app=app)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://docs") as http,
        Client(build_server(edge_runtime)) as mcp,
    ):
        response = await http.post(SEARCH_PATH, json=call)
        assert response.status_code == 503
        body = response.json()
        assert (body["error"], body["missing"]) == ("indexes_missing", refused.value.missing)
        assert "scoperag indexes ensure" in body["message"]
        result = await mcp.call_tool("elf_docs_search_l0", call, raise_on_error=False)
        assert result.is_error and result.content[0].text == body["message"]
        ready = await http.get("/readyz")
        assert ready.status_code == 503 and ready.json()["ready"] is False

        ensure_required(backend, edge_runtime.settings)
        response = await http.post(SEARCH_PATH, json=call)
        assert response.status_code == 200 and response.json()["hits"] == []
        ready = await http.get("/readyz")
        assert ready.status_code == 200 and ready.json()["ready"] is True
