"""The Ollama embedding path over real HTTP, against a protocol stand-in and a refused port.

`tests/ollama_standin.py` is not Ollama: it speaks Ollama's `/api/embed` protocol with vectors
of the real MiniLM model. A closed port on 127.0.0.1 gives a real refused connection.
"""

from __future__ import annotations

import json
import math
import re
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from fastmcp import Client
from ollama_standin import OllamaStandIn

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.books import COLLECTION
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.collection_embedder import stored_embedder
from scoperag.core.errors import EmbeddingServiceError
from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

REPO = Path(__file__).resolve().parents[1]
MODEL = "all-minilm"  # Ollama's name for all-MiniLM-L6-v2, the light choice
DEFAULT_MODEL = "hf.co/CompendiumLabs/bge-base-en-v1.5-gguf:Q8_0"  # BAAI/bge-base-en-v1.5
Embed = Callable[[list[str]], list[list[float]]]


@pytest.fixture(scope="module")
def standin(embedder: Embedder) -> Iterator[OllamaStandIn]:
    with OllamaStandIn({MODEL: embedder.embed_texts}) as server:
        yield server


def ollama_settings(data_dir: Path, base_url: str, **extra: Any) -> Settings:
    values = {"embed_model": MODEL, **extra}
    return Settings(
        data_dir=data_dir,
        profiles=["books"],
        embed_provider="ollama",
        ollama_base_url=base_url,
        **values,
    )


def refused_url() -> str:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_embeddings_come_from_post_api_embed(
    standin: OllamaStandIn, embedder: Embedder, tmp_path: Path
) -> None:
    ollama = Embedder(ollama_settings(tmp_path, standin.base_url))
    texts = ["It is a truth universally acknowledged.", "Mr. Bennet made no answer."]
    before = len(standin.requests)
    assert ollama.embed_texts(texts) == embedder.embed_texts(texts)  # JSON floats round-trip
    assert len(ollama.embed_query("Who is Mr. Bingley?")) == 384
    sent = standin.requests[before:]
    assert [(r["model"], r["input"]) for r in sent] == [
        (MODEL, texts),
        (MODEL, "Who is Mr. Bingley?"),
    ]
    assert ollama.info.model_dump() == {"provider": "ollama", "model": MODEL, "dimension": 384}


def test_dimensions_are_sent_and_the_vectors_checked(embedder: Embedder, tmp_path: Path) -> None:
    with OllamaStandIn({MODEL: embedder.embed_texts}) as server:
        shorter = Embedder(ollama_settings(tmp_path, server.base_url, embed_dimensions=128))
        vectors = shorter.embed_texts(["Netherfield Park is let at last."])
        assert len(vectors[0]) == 128 and server.requests[-1]["dimensions"] == 128
    with OllamaStandIn({MODEL: embedder.embed_texts}, honours_dimensions=False) as old:
        ignored = Embedder(ollama_settings(tmp_path, old.base_url, embed_dimensions=128))
        with pytest.raises(EmbeddingServiceError) as failure:
            ignored.embed_query("Netherfield")
    assert "returned 384-dimensional vectors but SCOPERAG_EMBED_DIMENSIONS=128" in str(
        failure.value
    )


def test_a_model_that_is_not_pulled_says_the_pull_command(
    standin: OllamaStandIn, tmp_path: Path
) -> None:
    settings = ollama_settings(tmp_path, standin.base_url, embed_model="nomic-embed-text")
    with pytest.raises(EmbeddingServiceError) as failure:
        Embedder(settings).embed_query("Longbourn")
    message = str(failure.value)
    assert "does not have the model 'nomic-embed-text'" in message
    assert "`ollama pull nomic-embed-text`" in message and standin.base_url in message


def _wider(embed: Embed) -> Embed:
    """768-d unit vectors (each MiniLM vector twice, scaled): a stand-in for bge-base-en-v1.5."""
    return lambda texts: [[value / math.sqrt(2) for value in v + v] for v in embed(texts)]


def test_the_default_model_is_bge_base_and_the_one_the_docs_pull(
    embedder: Embedder, tmp_path: Path
) -> None:
    """The default is bge-base-en-v1.5 under the name `ollama pull` takes (768-d vectors, which
    the collection records); the docs and the compose file pull it, or the light `all-minilm`."""
    settings = ollama_settings(tmp_path, "http://unused", embed_model=None)
    assert settings.effective_embed_model == DEFAULT_MODEL
    with OllamaStandIn({DEFAULT_MODEL: _wider(embedder.embed_texts)}) as server:
        default = Embedder(ollama_settings(tmp_path, server.base_url, embed_model=None))
        assert default.info.model_dump() == {
            "provider": "ollama",
            "model": DEFAULT_MODEL,
            "dimension": 768,
        }
        assert server.requests[-1]["model"] == DEFAULT_MODEL
    for doc in ["README.md", "docs/books.md", "docker-compose.yml"]:
        pulls = set(re.findall(r"ollama pull ([a-z][\w.:/-]*)", (REPO / doc).read_text()))
        assert DEFAULT_MODEL in pulls and pulls <= {DEFAULT_MODEL, MODEL}, (doc, pulls)


def test_a_refused_connection_says_ollama_is_unreachable(tmp_path: Path) -> None:
    url = refused_url()
    with pytest.raises(EmbeddingServiceError) as failure:
        Embedder(ollama_settings(tmp_path, url)).embed_texts(["Pemberley"])
    assert f"Ollama is unreachable at {url}" in str(failure.value)
    assert "SCOPERAG_OLLAMA_BASE_URL" in str(failure.value)


@pytest.fixture(scope="module")
def ollama_store(
    standin: OllamaStandIn, shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Chapter 1 ingested by `scoperag ingest book` with Ollama embeddings."""
    data_dir = tmp_path_factory.mktemp("ollama-store")
    env = {
        "SCOPERAG_DATA_DIR": str(data_dir),
        "SCOPERAG_EMBED_PROVIDER": "ollama",
        "SCOPERAG_EMBED_MODEL": MODEL,
        "SCOPERAG_OLLAMA_BASE_URL": standin.base_url,
    }
    book = shared_data / "books" / "pg1342-pride-and-prejudice.txt"
    arguments = ["ingest", "book", str(book), "--book-id", "pride", "--last-chapter", "1"]
    result = CliRunner().invoke(cli, [*arguments, "--json"], env=env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["book_id"], report["chapters"], report["sentences"]) == ("pride", 1, 61)
    return data_dir


async def call(runtime: Runtime, tool: str, **arguments: Any) -> Any:
    async with Client(build_server(runtime)) as client:
        return await client.call_tool(tool, arguments, raise_on_error=False)


async def test_search_book_through_ollama_embeddings(
    standin: OllamaStandIn, ollama_store: Path
) -> None:
    runtime = Runtime(ollama_settings(ollama_store, standin.base_url))
    try:
        recorded = stored_embedder(runtime.backend, COLLECTION)
        assert recorded and (recorded.provider, recorded.model) == ("ollama", MODEL)
        await call(runtime, "set_reading_position", book_id="pride", quote="made no answer")
        result = await call(runtime, "search_book", book_id="pride", query="Netherfield Park")
    finally:
        runtime.close()
    found = result.structured_content
    assert found["user_pos"] == 7 and found["passages"]
    assert all(p["pos_end"] <= 7 for p in found["passages"])
    assert any("Netherfield Park is let at last" in p["text"] for p in found["passages"])
    assert "Netherfield Park" in [request["input"] for request in standin.requests]


async def test_a_dimension_other_than_the_collection_is_refused(
    standin: OllamaStandIn, ollama_store: Path
) -> None:
    runtime = Runtime(ollama_settings(ollama_store, standin.base_url, embed_dimensions=128))
    try:
        await call(runtime, "set_reading_position", book_id="pride", sentence=5)
        result = await call(runtime, "search_book", book_id="pride", query="Netherfield")
    finally:
        runtime.close()
    assert result.is_error
    message = result.content[0].text
    assert f"built with ollama/{MODEL} (384-d)" in message
    assert f"current embedder is ollama/{MODEL} (128-d)" in message


async def test_search_when_ollama_is_down_says_so(ollama_store: Path) -> None:
    url = refused_url()
    runtime = Runtime(ollama_settings(ollama_store, url))
    try:
        await call(runtime, "set_reading_position", book_id="pride", sentence=5)
        result = await call(runtime, "search_book", book_id="pride", query="Netherfield")
    finally:
        runtime.close()
    assert result.is_error and f"Ollama is unreachable at {url}" in result.content[0].text


def _documented_text() -> str:
    """The books docs section, and the README once the lead has merged it."""
    paths = [REPO / "docs" / "books.md", REPO / "README.md"]
    return "\n".join(path.read_text() for path in paths if path.exists())


def test_compose_runs_qdrant_and_ollama_as_the_docs_say() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"qdrant", "ollama"} <= set(services)
    assert set(compose["volumes"]) == {"qdrant_storage", "ollama_models"}
    mounts = {name: services[name]["volumes"] for name in ("qdrant", "ollama")}
    assert mounts == {
        "qdrant": ["qdrant_storage:/qdrant/storage"],
        "ollama": ["ollama_models:/root/.ollama"],
    }
    published = {
        port.rsplit(":", 2)[-2]: name for name, spec in services.items() for port in spec["ports"]
    }
    docs = _documented_text()
    serves = {"SCOPERAG_QDRANT_URL": "qdrant", "SCOPERAG_OLLAMA_BASE_URL": "ollama"}
    urls = re.findall(rf"({'|'.join(serves)})=http://localhost:(\d+)", docs)
    assert {variable for variable, _ in urls} == set(serves)
    for variable, port in urls:
        assert published.get(port) == serves[variable], (variable, port)
    for name in [*services, *compose["volumes"], "docker compose up -d"]:
        assert name in docs
