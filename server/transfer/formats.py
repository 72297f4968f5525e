"""The export file: JSON Lines (gzip when the name ends in `.gz`), a header line per collection
followed by that collection's points, one per line.

```
{"format": "scoperag-export", "version": 1, "profile": "memory", "collection": "memories",
 "embedder": {"provider": "local", "model": "...", "dimension": 384}, "points": 2, ...}
{"id": "...", "payload": {...}, "dense": [0.01, ...], "sparse": {"indices": [...], "values": [...]}}
```

Floats are written as Python's shortest round-trip text, so a vector read back is the vector
written, bit for bit.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, Field

from scoperag.core.embedding.embedders import EmbedderInfo

FORMAT = "scoperag-export"
VERSION = 1
GZIP_MAGIC = b"\x1f\x8b"
GZIP_LEVEL = 1  # vectors as text compress little more at higher levels, and far slower


class ExportHeader(BaseModel):
    """The first line of a collection's section of an export file."""

    format: Literal["scoperag-export"] = FORMAT
    version: int = VERSION
    profile: str = Field(description="The profile whose collection this is.")
    collection: str
    embedder: EmbedderInfo | None = Field(description="What built the dense vectors.")
    points: int = Field(description="Points in the section (the lines that follow).")
    exported_at: str = Field(
        default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"),
        description="RFC 3339 time of the export.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Collection metadata.")
    indexes: dict[str, str] = Field(
        default_factory=dict, description="Payload key -> index type of the collection."
    )


def is_header(line: object) -> bool:
    """Whether a decoded line is a section header (it names the format)."""
    return isinstance(line, dict) and line.get("format") == FORMAT


def point_line(record: Any) -> str:
    """One point (a qdrant-client `Record`) as its line, without the newline."""
    from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR

    vectors = record.vector if isinstance(record.vector, dict) else {DENSE_VECTOR: record.vector}
    line: dict[str, Any] = {"id": record.id, "payload": record.payload or {}}
    line["dense"] = vectors.get(DENSE_VECTOR)
    sparse = vectors.get(SPARSE_VECTOR)
    if sparse is not None:
        line["sparse"] = {"indices": list(sparse.indices), "values": list(sparse.values)}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def parse_point(line: dict[str, Any], dimension: int | None) -> Any:
    """A point line as a `PointStruct`; `ValueError` says what is wrong with it."""
    from qdrant_client import models

    from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR

    point_id, dense, payload = line.get("id"), line.get("dense"), line.get("payload")
    if not isinstance(point_id, int | str) or isinstance(point_id, bool):
        raise ValueError(f"'id' must be an integer or a UUID, got {point_id!r}")
    if not isinstance(payload, dict):
        raise ValueError("'payload' must be an object")
    if not isinstance(dense, list) or not all(isinstance(x, int | float) for x in dense):
        raise ValueError("'dense' must be a list of numbers")
    if dimension is not None and len(dense) != dimension:
        raise ValueError(f"'dense' has {len(dense)} numbers, the header says {dimension}")
    vectors: dict[str, Any] = {DENSE_VECTOR: dense}
    if line.get("sparse") is not None:
        vectors[SPARSE_VECTOR] = models.SparseVector.model_validate(line["sparse"])
    return models.PointStruct(id=point_id, vector=vectors, payload=payload)


def open_for_writing(path: Path, compressed: bool) -> IO[str]:
    """A new text file at `path`, gzip-compressed if asked."""
    if compressed:
        return gzip.open(path, "wt", encoding="utf-8", compresslevel=GZIP_LEVEL)
    return path.open("w", encoding="utf-8")


def open_for_reading(path: Path) -> IO[str]:
    """A text file at `path`, decompressed when it is gzip (by its first bytes, not its name)."""
    raw = path.open("rb")
    compressed = raw.read(2) == GZIP_MAGIC
    raw.seek(0)
    binary: IO[bytes] = gzip.GzipFile(fileobj=raw) if compressed else raw
    return io.TextIOWrapper(binary, encoding="utf-8")


def numbered_lines(file: IO[str]) -> Iterator[tuple[int, str]]:
    """(line number from 1, text) of each line that is not blank."""
    for number, text in enumerate(file, start=1):
        if text.strip():
            yield number, text
