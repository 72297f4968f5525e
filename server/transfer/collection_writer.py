"""Writing a collection's points as they are (ids, vectors, payloads) with its metadata and
indexes: what `scoperag migrate` and `scoperag import` share."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from scoperag.core.config.settings import Settings
from scoperag.core.errors import ScoperagError

if TYPE_CHECKING:
    from qdrant_client import models

    from scoperag.core.engine.backend import VectorBackend

Progress = Callable[[int], None]


class CollectionCopy(BaseModel):
    """What one copied collection holds on the target."""

    collection: str
    points: int
    indexes: list[str]
    seconds: float


def write_collection(
    target: VectorBackend,
    collection: str,
    metadata: dict[str, Any],
    indexes: dict[str, str],
    pages: Iterable[list[models.PointStruct]],
    settings: Settings,
    progress: Progress | None = None,
) -> CollectionCopy:
    """Write every page of points into `collection`, creating it with `metadata` (which
    records its embedder) and the payload `indexes` given plus those its profile requires.

    Idempotent: points keep their ids, so a second run (or a run after an interruption)
    overwrites instead of duplicating. A target built with another embedder is refused. Each
    page first checks the disk's free space (`core.engine.disk_space`).
    """
    from scoperag.core.contracts.registry import required_indexes
    from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
    from scoperag.core.engine.collections import ensure_indexes
    from scoperag.core.engine.disk_space import ensure_room

    began = time.perf_counter()
    room = getattr(target, "root", None)  # where the target keeps its files, if here
    pages = iter(pages)
    first = next(pages, [])
    if target.collection_exists(collection):
        stored = target.collection_metadata(collection).get(EMBEDDER_KEY)
        if stored != metadata.get(EMBEDDER_KEY):
            raise ScoperagError(
                f"Collection '{collection}' already exists on the target with another embedder "
                f"({stored} instead of {metadata.get(EMBEDDER_KEY)}); nothing was copied."
            )
    else:
        ensure_room(room, f"create '{collection}' on the target")
        target.create_collection(collection, _dimension(metadata, first), metadata)
    for key, kind in indexes.items():
        if key not in target.payload_indexes(collection):
            target.create_index(collection, key, kind)
    ensure_indexes(target, collection, required_indexes(settings).get(collection, []))
    copied = 0
    for page in itertools.chain([first], pages) if first else ():  # a page in memory at a time
        ensure_room(room, f"copy points into '{collection}'")
        target.upsert_points(collection, page)
        copied += len(page)
        if progress:
            progress(len(page))
    held = target.count(collection, None)
    if held < copied:  # more is fine: the target may have held other points already
        raise ScoperagError(
            f"Collection '{collection}': copied {copied} points, target holds {held}."
        )
    return CollectionCopy(
        collection=collection,
        points=copied,
        indexes=sorted(target.payload_indexes(collection)),
        seconds=round(time.perf_counter() - began, 2),
    )


def _dimension(metadata: dict[str, Any], first: list[models.PointStruct]) -> int:
    from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
    from scoperag.core.engine.vector_names import DENSE_VECTOR

    recorded = (metadata.get(EMBEDDER_KEY) or {}).get("dimension")
    if recorded:
        return int(recorded)
    if first and isinstance(first[0].vector, dict) and DENSE_VECTOR in first[0].vector:
        return len(first[0].vector[DENSE_VECTOR])
    raise ScoperagError("The collection records no embedder dimension and holds no points.")
