"""`scoperag migrate`: a collection ingested on local mode moves to Edge (and back) as it is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastmcp import Client

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.pipelines.pdf import ingest_pdfs
from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES

SAMPLE = SAMPLES / "qpdf-page-labels-num-tree.pdf"
FIND = {"query": "page labels", "document_id": "qpdf-page-labels-num-tree", "limit": 5}


def _snapshot(backend: VectorBackend, collection: str) -> dict[str, tuple[dict, list[float]]]:
    return {
        str(record.id): (record.payload, record.vector["text-dense"])
        for page in backend.points(collection)
        for record in page
    }


async def _find(runtime: Runtime) -> list[tuple[str, int, float]]:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool("qdrant-find", FIND)
    hits = result.structured_content["hits"]
    return [(hit["text"], hit["physical_page_index"], round(hit["score"], 4)) for hit in hits]


@pytest.fixture
def data_dir(tmp_path: Path, embedder: Embedder) -> Path:
    """A local-mode store holding one ingested PDF."""
    runtime = Runtime(Settings(data_dir=tmp_path, backend="local"), embedder=embedder)
    [report] = ingest_pdfs([SAMPLE], runtime.backend, embedder, "pdf_pages")
    assert report.ok and report.chunks > 10
    runtime.close()
    return tmp_path


def _migrate(data_dir: Path, *args: str) -> object:
    return CliRunner().invoke(
        cli, ["migrate", *args], env={"SCOPERAG_DATA_DIR": str(data_dir)}, catch_exceptions=False
    )


async def test_local_collection_moves_to_edge_without_re_embedding(
    data_dir: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = Runtime(Settings(data_dir=data_dir, backend="local", profiles=["pdf"]), embedder)
    before = _snapshot(local.backend, "pdf_pages")
    hits_before = await _find(local)
    local.close()

    def refuse(*_: object) -> None:
        raise AssertionError("migrate must not embed anything")

    monkeypatch.setattr(Embedder, "embed_texts", refuse)
    result = _migrate(data_dir, "--from", "local", "--to", "edge")
    assert result.exit_code == 0, result.output
    assert f"pdf_pages: {len(before)} points" in result.output
    monkeypatch.undo()

    edge = Runtime(Settings(data_dir=data_dir, backend="edge", profiles=["pdf"]), embedder)
    after = _snapshot(edge.backend, "pdf_pages")
    assert after.keys() == before.keys()
    for point_id, (payload, vector) in before.items():
        assert after[point_id][0] == payload
        assert after[point_id][1] == pytest.approx(vector, abs=1e-6)
    indexes = edge.backend.payload_indexes("pdf_pages")
    assert {"document_id", "physical_page_index", "page_label", "chunk_index"} <= set(indexes)
    assert edge.backend.collection_metadata("pdf_pages")["scoperag_embedder"]["dimension"] == 384
    assert await _find(edge) == hits_before
    edge.close()


def test_a_second_run_overwrites_and_edge_goes_back_to_local(data_dir: Path) -> None:
    local = Runtime(Settings(data_dir=data_dir, backend="local"))
    original = _snapshot(local.backend, "pdf_pages")
    local.close()
    runs = [json.loads(_migrate(data_dir, "--from", "local", "--to", "edge", "--json").output)]
    runs.append(json.loads(_migrate(data_dir, "--from", "local", "--to", "edge", "--json").output))
    assert [run["collections"][0]["points"] for run in runs] == [len(original)] * 2
    edge = Runtime(Settings(data_dir=data_dir, backend="edge"))
    assert edge.backend.count("pdf_pages", None) == len(original)  # overwritten, not doubled
    edge.close()

    shutil.rmtree(data_dir / "qdrant")
    assert _migrate(data_dir, "--from", "edge", "--to", "local").exit_code == 0
    local = Runtime(Settings(data_dir=data_dir, backend="local"))
    back = _snapshot(local.backend, "pdf_pages")
    local.close()
    assert back.keys() == original.keys()
    assert all(back[key][0] == payload for key, (payload, _) in original.items())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "edge", "--to", "edge"], "both 'edge'"),
        (["--from", "local", "--to", "edge", "--collection", "nope"], "holds: pdf_pages"),
        (["--from", "local", "--to", "server"], "SCOPERAG_QDRANT_URL"),
    ],
)
def test_mistakes_are_explained(data_dir: Path, args: list[str], message: str) -> None:
    result = _migrate(data_dir, *args)
    assert result.exit_code == 1 and message in result.output


def test_an_open_store_is_explained(data_dir: Path) -> None:
    holder = Runtime(Settings(data_dir=data_dir, backend="local"))
    assert holder.backend
    result = _migrate(data_dir, "--from", "local", "--to", "edge")
    holder.close()
    assert result.exit_code == 1 and "already open in another process" in result.output


def test_bench_command_passes_its_arguments_to_the_harness() -> None:
    result = CliRunner().invoke(cli, ["bench", "--help"])
    assert result.exit_code == 0
    assert "--sizes" in result.output and "recall@10" in result.output
