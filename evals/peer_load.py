"""Load benchmark memories into an mcp-memory-service sqlite-vec database (run by the peer venv).

Started by `evals/peer_memory.py` with the peer venv's interpreter (it imports nothing of
scoperag):

    PEER_PYTHON evals/peer_load.py MEMORIES.json VECTORS.npy DB_PATH

MEMORIES.json is a list of {content, tags, memory_type, created_at (Unix seconds)}; VECTORS.npy
holds their MiniLM vectors, row for row (the vectors scoperag stores, from the same packaged
model). The peer's own `store_batch` writes them (its schema, its content hashes, its
timestamps); only its batch `encode` is handed the given vectors instead of recomputing them,
which saves ~10k forward passes on a busy 2-core machine. Queries and the measured stores are
embedded by the peer's own model. Prints one JSON line: stored, refused, count.
"""

from __future__ import annotations

import asyncio
import json
import sys

import numpy as np
from mcp_memory_service.config import EMBEDDING_MODEL_NAME
from mcp_memory_service.models.memory import Memory
from mcp_memory_service.storage.sqlite_vec import SqliteVecMemoryStorage
from mcp_memory_service.utils.hashing import generate_content_hash

BATCH = 500


class GivenVectors:
    """Stands in for the peer's model during the load: `encode` returns the given rows."""

    def __init__(self, contents: list[str], vectors: np.ndarray) -> None:
        self.rows = {content: row for row, content in enumerate(contents)}
        self.vectors = vectors

    def encode(self, texts: list[str], convert_to_numpy: bool = True, **_: object) -> np.ndarray:
        return self.vectors[[self.rows[text] for text in texts]]


async def load(memories: list[dict], vectors: np.ndarray, db_path: str) -> dict[str, int]:
    storage = SqliteVecMemoryStorage(db_path, embedding_model=EMBEDDING_MODEL_NAME)
    await storage.initialize()
    model = storage.embedding_model
    storage.embedding_model = GivenVectors([m["content"] for m in memories], vectors)
    stored = refused = 0
    try:
        for start in range(0, len(memories), BATCH):
            batch = [
                Memory(
                    content=m["content"],
                    content_hash=generate_content_hash(m["content"]),
                    tags=m["tags"],
                    memory_type=m["memory_type"],
                    created_at=m["created_at"],
                    updated_at=m["created_at"],
                )
                for m in memories[start : start + BATCH]
            ]
            for ok, _message in await storage.store_batch(batch):
                stored += bool(ok)
                refused += not ok
    finally:
        storage.embedding_model = model
        count = storage.conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        await storage.close()
    return {"stored": stored, "refused": refused, "count": count}


def main() -> None:
    memories_path, vectors_path, db_path = sys.argv[1:4]
    with open(memories_path, encoding="utf-8") as handle:
        memories = json.load(handle)
    vectors = np.load(vectors_path)
    print(json.dumps(asyncio.run(load(memories, vectors, db_path))), flush=True)


if __name__ == "__main__":
    main()
