"""Kinds of damage to a collection's files, applied to a small Qdrant Edge store, and the
states a killed process leaves that the engine recovers from: shared by
tests/test_store_check.py, evals/faults.py and evals/fault_campaign.py."""

from __future__ import annotations

import random
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

from qdrant_client import models

from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.vector_names import DENSE_VECTOR

DIMENSION = 8
QUERY = [1.0] * DIMENSION


def build_store(root: Path) -> None:
    """Collections `damaged` and `intact`, 50 points each."""
    rnd = random.Random(0)
    backend = EdgeBackend.open(root)
    for name in ("damaged", "intact"):
        backend.create_collection(name, DIMENSION, {})
        backend.upsert_points(
            name,
            [
                models.PointStruct(
                    id=i,
                    vector={DENSE_VECTOR: [rnd.uniform(-1, 1) for _ in range(DIMENSION)]},
                    payload={"text": f"point number {i}", "n": i},
                )
                for i in range(50)
            ],
        )
    backend.close()


def segment(root: Path) -> Path:
    return whole_segment(root / "damaged/shard")


def overwrite(path: Path, data: bytes) -> None:
    with path.open("r+b") as handle:
        handle.write(data)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "collection.json not UTF-8": lambda root: (root / "damaged/collection.json").write_bytes(
        b"\x00" * 8 + b"\xff\xfe"
    ),
    "collection.json cut short": lambda root: (root / "damaged/collection.json").write_text(
        '{"dimension": 8, "meta'
    ),
    "version.info garbage": lambda root: (segment(root) / "version.info").write_bytes(b"\xff\x00"),
    "segment.json cut short": lambda root: (segment(root) / "segment.json").write_text('{"v'),
    "dense vectors garbage": lambda root: overwrite(
        segment(root) / "vector_storage-text-dense/vectors/chunk_0.mmap", b"\x7f" * 50 * 4 * 8
    ),
    "payload page garbage": lambda root: overwrite(
        segment(root) / "payload_storage/page_0.dat", random.Random(1).randbytes(1 << 16)
    ),
    "dimension changed": lambda root: (root / "damaged/collection.json").write_text(
        (root / "damaged/collection.json").read_text().replace('"dimension": 8', '"dimension": 9')
    ),
}


def whole_segment(shard: Path) -> Path:
    return next(path for path in (shard / "segments").iterdir() if path.is_dir())


def half_made(shard: Path, files: int | None = None) -> Path:
    """A segment folder of `shard` as a process killed while the engine built it leaves it: a
    segment's files (the first `files` of them, all if None) without the `version.info` that
    Qdrant writes last."""
    source = whole_segment(shard)
    made = source.parent / str(uuid.uuid4())
    shutil.copytree(source, made)
    (made / "version.info").unlink()
    kept = sorted(p for p in made.rglob("*") if p.is_file())
    for extra in kept[files:] if files is not None else []:
        extra.unlink()
    return made


# States of a shard folder a killed process leaves, which the engine recovers from, serving
# every point: the pre-check must not refuse them.
RECOVERED: dict[str, Callable[[Path], object]] = {
    "empty segment folder": lambda shard: (shard / "segments" / str(uuid.uuid4())).mkdir(),
    "segment without version.info": half_made,
    "segment with some of its files": lambda shard: half_made(shard, 5),
    "segment with a cut segment.json": lambda shard: (half_made(shard) / "segment.json").write_text(
        '{"v'
    ),
    "segment marked deleted": lambda shard: shutil.copytree(
        whole_segment(shard), shard / "segments" / f"{uuid.uuid4()}.deleted"
    ),
}
