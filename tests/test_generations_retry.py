"""A generation change made once more, as the shared backend makes a call again after a
takeover (the owner died before answering), ends as the change made once."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.engine.generations import GENERATION_KEY, REGISTRY_KEY
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.server.runtime import Runtime

COLLECTION = "notes"
WRITER = f"{socket.gethostname()}:{os.getpid()}"


def _write(runtime: Runtime, generation: str, first: int, count: int) -> None:
    runtime.backend.upsert_points(
        COLLECTION,
        [
            models.PointStruct(
                id=n,
                vector={DENSE_VECTOR: [1.0, 0.5, 0.25, float(n)]},
                payload={"doc_id": "source", GENERATION_KEY: generation},
            )
            for n in range(first, first + count)
        ],
    )


def _state(runtime: Runtime) -> tuple[int, list[str], list[dict]]:
    """What readers see (points, their generations) and the registry of hidden generations."""
    backend = runtime.backend
    records = backend.scroll(COLLECTION, None, limit=100)
    generations = sorted({(record.payload or {})[GENERATION_KEY] for record in records})
    return (
        backend.count(COLLECTION, None),
        generations,
        backend.collection_metadata(COLLECTION)[REGISTRY_KEY],
    )


def test_a_commit_made_again_after_a_takeover_keeps_the_committed_version(
    tmp_path: Path,
) -> None:
    """Regression: an owner that died after committing a replacement but before answering left
    the attached writer to take over and make the commit again, which failed with "Generation
    ... is not being written" although the new version was in place. Now the commit made again
    succeeds and changes nothing; `begin` and `abort` made twice end as made once."""
    settings = Settings(data_dir=tmp_path, backend="edge")
    owner = Runtime(settings)
    attached = Runtime(settings)
    try:
        assert (owner.backend.role, attached.backend.role) == ("owner", "attached")
        owner.backend.create_collection(COLLECTION, 4, {})
        generations = attached.backend.generations
        old = generations.begin(COLLECTION, ["source"], WRITER, "first")
        _write(attached, old, 0, 3)
        generations.commit(COLLECTION, old, [])

        new = uuid.uuid4().hex
        assert generations.begin(COLLECTION, ["source"], WRITER, new) == new
        assert generations.begin(COLLECTION, ["source"], WRITER, new) == new
        assert [entry["generation"] for entry in _state(attached)[2]] == [new]  # one entry
        _write(attached, new, 10, 2)
        generations.commit(COLLECTION, new, [])  # run by the owner
        committed = _state(attached)
        assert committed == (2, [new], [])

        owner.close()  # the owner leaves: the next call takes over and is made again
        generations.commit(COLLECTION, new, [])
        assert attached.backend.role == "owner"
        assert _state(attached) == committed

        dropped = uuid.uuid4().hex
        generations.begin(COLLECTION, ["source"], WRITER, dropped)
        _write(attached, dropped, 20, 4)
        generations.abort(COLLECTION, dropped)
        generations.abort(COLLECTION, dropped)
        assert _state(attached) == committed
    finally:
        attached.close()
        owner.close()
