"""Damaged collections are errors naming the collection, its path and what to do, never served.

Opening a collection checks what is cheap before the engine loads it: collection.json parses
and records a dimension, and the shard's config and every whole segment's state files are
readable and agree on the dense dimension. Only what the engine cannot open is refused: a
segment folder without its `version.info` (the file Qdrant writes last, so a process killed
while building a segment leaves one) or marked `.deleted` is half-made, and the engine drops
it on load and serves the rest (the other segments and the write-ahead log); those are
reported as recovered, not as damage. A point count below what was acknowledged is the
ledger's to find (`core.engine.edge.ledger`). On every read, an engine storage error (a page that
does not decompress, a vector that is not readable) and a score no intact vector gives (not
finite, or a cosine beyond `COSINE_LIMIT`) raise `CorruptCollectionError`; other collections go on.
"""

from __future__ import annotations

import errno
import json
import logging
import math
import os
from pathlib import Path
from typing import Any

import qdrant_edge as edge

from scoperag.core.engine.edge.errors import MissingIndexError
from scoperag.core.engine.error_kinds import (
    is_missing_index,
    is_permission_denied,
    is_storage_damage,
)
from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR
from scoperag.core.errors import ScoperagError, StorePermissionError

logger = logging.getLogger(__name__)
# A query without prefetches on the dense vector is a cosine search: its scores lie in [-1, 1].
COSINE_LIMIT = 1.0 + 1e-3
_READS = frozenset({"scroll", "retrieve", "count", "info", "facet", "query"})


class CorruptCollectionError(ScoperagError):
    """A collection whose files cannot be read as they should."""

    def __init__(self, collection: str, path: Path, reason: str) -> None:
        self.collection, self.path, self.reason = collection, path, reason
        super().__init__(
            f"Collection '{collection}' at {path} cannot be read: {reason}. Its files are damaged "
            "or incomplete: restore that folder from a backup, or delete the collection "
            f"(`scoperag delete`) and ingest its sources again. `scoperag check` reports every "
            "collection's state; other collections are not affected."
        )


def read_record(collection: str, path: Path) -> dict[str, Any]:
    """collection.json parsed, with a dimension and metadata, else `CorruptCollectionError`."""
    try:
        record = json.loads(path.read_bytes().decode("utf-8"))
    except PermissionError as exc:  # permissions, not damage
        raise StorePermissionError(path, "read", exc) from None
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError included
        raise CorruptCollectionError(collection, path.parent, f"{path.name}: {exc}") from None
    dimension = record.get("dimension") if isinstance(record, dict) else None
    if not isinstance(dimension, int) or not isinstance(record.get("metadata"), dict):
        reason = f"{path.name} has no whole 'dimension' and 'metadata' object"
        raise CorruptCollectionError(collection, path.parent, reason)
    return record


def half_made_segments(shard: Path) -> list[Path]:
    """The shard's segment folders the engine drops on load: no `version.info` (written last
    when a segment is built) or marked deleted."""
    return sorted(
        path
        for path in (shard / "segments").glob("*")
        if path.is_dir() and (path.suffix == ".deleted" or not (path / "version.info").exists())
    )


def recovered_segments(shard: Path) -> list[str]:
    """What loading the shard recovers from: each half-made segment folder, said so."""
    return [
        f"{path}: a half-made segment (a process stopped while the engine built or removed it); "
        "the engine drops it on load and serves every acknowledged point from the other "
        "segments and its write-ahead log"
        for path in half_made_segments(shard)
    ]


def shard_problems(shard: Path, dimension: int) -> list[str]:
    """What the cheap file checks find wrong with a shard folder (empty: nothing)."""
    problems = _dense_size_problems(shard / "edge_config.json", dimension, ("vectors",))
    half_made = set(half_made_segments(shard))
    segments = sorted(path for path in (shard / "segments").glob("*") if path.is_dir())
    for segment in (path for path in segments if path not in half_made):
        state = ("config", "vector_data")
        problems += _dense_size_problems(segment / "segment.json", dimension, state)
        try:
            (segment / "version.info").read_bytes().decode("ascii")
        except (OSError, ValueError) as exc:
            problems.append(f"{segment / 'version.info'}: {exc}")
    return problems


def _dense_size_problems(path: Path, dimension: int, keys: tuple[str, ...]) -> list[str]:
    """Problems of a JSON file whose `keys` path leads to the vectors' settings."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
        for key in keys:
            data = data[key]
        size = data[DENSE_VECTOR]["size"]
    except PermissionError as exc:
        raise StorePermissionError(path, "read", exc) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"{path}: unreadable ({type(exc).__name__}: {exc})"]
    if size != dimension:
        return [f"{path}: dense vectors of {size} dimensions, collection.json says {dimension}"]
    return []


def load_shard(collection: str, folder: Path, dimension: int) -> edge.EdgeShard:
    """The shard in `folder`, loaded after the file checks; `CorruptCollectionError` if it is
    damaged (the engine's own load error included)."""
    problems = shard_problems(folder, dimension)
    if problems:
        raise CorruptCollectionError(collection, folder.parent, "; ".join(problems))
    for recovered in recovered_segments(folder):
        logger.warning("Collection '%s': %s.", collection, recovered)
    try:
        return edge.EdgeShard.load(str(folder))
    except Exception as exc:  # the engine raises plain Exception
        if is_permission_denied(exc):  # Edge opens its files for reading and writing
            denied = PermissionError(errno.EACCES, f"{os.strerror(errno.EACCES)}: {exc}")
            raise StorePermissionError(folder, "read and write", denied) from None
        raise CorruptCollectionError(collection, folder.parent, str(exc)) from None


class CheckedShard:
    """An Edge shard whose reads raise `CorruptCollectionError` on storage errors and on scores
    no intact vector gives, and `MissingIndexError` for an order or a facet on a key without
    its index (the one place the engine's errors are translated); writes and everything else
    pass through as they are."""

    def __init__(self, shard: edge.EdgeShard, collection: str, folder: Path) -> None:
        self.shard, self.collection, self.folder = shard, collection, folder

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.shard, name)
        if name not in _READS:
            return method

        def read(*args: Any, **kwargs: Any) -> Any:
            try:
                result = method(*args, **kwargs)
            except Exception as exc:
                if is_storage_damage(exc):
                    raise CorruptCollectionError(self.collection, self.folder, str(exc)) from None
                if is_missing_index(exc) and name in ("scroll", "facet"):
                    request = args[0] if args else kwargs["request"]
                    key, use = (
                        (request.key, name)
                        if name == "facet"
                        else (request.order_by.key, "order_by")
                    )
                    raise MissingIndexError(self.collection, key, use) from None
                raise
            if name == "query":
                request = args[0] if args else kwargs["request"]
                self.check_scores(result, request)
            return result

        return read

    def check_scores(self, points: list[Any], request: Any) -> None:
        """Scores must be finite, and cosines within [-1, 1] (fused and BM25 scores have no
        bound; what the query scored is looked at only for a score past 1)."""
        for point in points:
            score = point.score
            if not math.isfinite(score) or abs(score) > COSINE_LIMIT and _cosine(request):
                reason = (
                    f"point {point.id} scored {score!r}, which no intact vector gives "
                    "(its dense vectors are damaged)"
                )
                raise CorruptCollectionError(self.collection, self.folder, reason)


def _cosine(request: Any) -> bool:
    """Whether a query's scores are cosines: one without prefetches, on the dense vector (Edge
    shows a query's vector name only in its text: `Query.Nearest(query=..., using="...")`)."""
    return not request.prefetches and f'using="{SPARSE_VECTOR}"' not in repr(request.query)
