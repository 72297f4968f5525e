"""No vector that is not a vector: an embedder's broken vector is refused with its position and
nothing is written; the engine refuses points whose vectors are not vectors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.memory import COLLECTION
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.embedding.vector_check import InvalidVectorError, check_vectors
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

POISON = "poison"


class SpoiledModel:
    """The real local model, but a text holding POISON gets a NaN in its vector (a model of our
    own gone wrong: a test double of no remote service)."""

    normalises = True

    def __init__(self, model: Any) -> None:
        self.model = model
        self.spoiled: list[str] = []

    def _spoil(self, text: str, vector: list[float]) -> list[float]:
        if POISON in text:
            self.spoiled.append(text)
            return [float("nan"), *vector[1:]]
        return vector

    def embed_query(self, text: str) -> list[float]:
        return self._spoil(text, self.model.embed_query(text))

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        vectors = self.model.embed_texts(texts)
        return [self._spoil(text, vector) for text, vector in zip(texts, vectors, strict=True)]


@pytest.fixture
def spoiled(embedder: Embedder, tmp_path: Path) -> tuple[Runtime, SpoiledModel]:
    model = SpoiledModel(embedder.backend)
    settings = Settings(
        data_dir=tmp_path / "store", backend="edge", profiles=["memory"], allowed_dirs=[tmp_path]
    )
    runtime = Runtime(settings, embedder=Embedder(settings, SimpleNamespace(backend=model)))
    yield runtime, model
    runtime.close()


def _points(runtime: Runtime) -> int:
    backend = runtime.backend
    return backend.count(COLLECTION, None) if backend.collection_exists(COLLECTION) else 0


async def test_a_memory_whose_vector_is_nan_is_refused_and_not_written(
    spoiled: tuple[Runtime, SpoiledModel],
) -> None:
    runtime, model = spoiled
    async with Client(build_server(runtime)) as client:
        kept = await client.call_tool("store_memory", {"content": "A memory of no harm."})
        assert kept.structured_content["stored"] is True
        with pytest.raises(ToolError) as caught:
            await client.call_tool("store_memory", {"content": f"A {POISON} memory."})
    assert model.spoiled == [f"A {POISON} memory."]  # the model gave its broken vector
    assert "text 0" in str(caught.value) and "is not finite (nan at index 0)" in str(caught.value)
    assert _points(runtime) == 1


async def test_an_ingestion_with_a_nan_vector_names_its_position_and_writes_nothing(
    spoiled: tuple[Runtime, SpoiledModel], tmp_path: Path
) -> None:
    runtime, model = spoiled
    memories = [
        {"content": "First, harmless."},
        {"content": f"Second, {POISON}."},
        {"content": "Third."},
    ]
    file = tmp_path / "memories.json"
    file.write_text(json.dumps(memories), encoding="utf-8")
    async with Client(build_server(runtime)) as client:
        with pytest.raises(ToolError) as caught:
            await client.call_tool("ingest_memories", {"path": str(file)})
    assert model.spoiled == [f"Second, {POISON}."]
    assert "The vector of text 1 (its position in the batch" in str(caught.value)
    assert _points(runtime) == 0


@pytest.mark.parametrize(
    ("vector", "reason"),
    [
        ([1.0, float("inf"), 0.0, 0.0], "is not finite (inf at index 1)"),
        ([1.0, 0.0, 0.0], "has 3 dimensions, the collection's vectors have 4"),
    ],
)
def test_the_engine_refuses_points_whose_vectors_are_not_vectors(
    tmp_path: Path, vector: list[float], reason: str
) -> None:
    backend = EdgeBackend.open(tmp_path / "edge")
    try:
        backend.create_collection("c", 4, {})
        good = models.PointStruct(id=1, vector={DENSE_VECTOR: [1.0, 0.0, 0.0, 0.0]}, payload={})
        bad = models.PointStruct(id=2, vector={DENSE_VECTOR: vector}, payload={})
        with pytest.raises(InvalidVectorError, match=rf"point 1 .*{re.escape(reason)}") as caught:
            backend.upsert_points("c", [good, bad])
        assert caught.value.position == 1
        assert backend.count("c", None) == 0  # the good point of the batch is not written either
        backend.upsert_points("c", [good])
        assert backend.count("c", None) == 1
    finally:
        backend.close()


def test_a_vector_off_the_unit_sphere_is_refused_only_where_the_model_normalises() -> None:
    check_vectors([[3.0, 4.0]], 2, normalised=False)  # an Ollama model's vector may be so
    with pytest.raises(InvalidVectorError, match="text 1 .*has norm 5, where the model gives"):
        check_vectors([[0.6, 0.8], [3.0, 4.0]], 2, normalised=True)
