"""The export file: JSON Lines (gzip when the name ends in `.gz`), a header line per collection
followed by that collection's points, one per line.

```
{"format": "scoperag-export", "version": 1, "profile": "memory", "collection": "memories",
 "embedder": {"provider": "local", "model": "...", "dimension": 384}, "points": 2, ...}
{"id": "...", "payload": {...}, "dense": "base64...", "sparse": {"indices": [...], "values": [...]}}
```

`dense` is the dense vector's little-endian float32 values in base64 (the engines keep float32,
so it is the stored vector bit for bit, a third of its decimal text and ten times faster to
read and write); a JSON list of numbers is accepted too. `sparse` is the BM25 vector.
"""

from __future__ import annotations

import base64
import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from scoperag.core.embedding.embedders import EmbedderInfo

FORMAT = "scoperag-export"
VERSION = 1
GZIP_LEVEL = 1  # vectors compress little more at higher levels, and far slower
DENSE_ENCODING = "float32-le-base64"


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
    dense_encoding: str = Field(
        default=DENSE_ENCODING, description="How `dense` is written (a list is read too)."
    )
    state: dict[str, Any] = Field(
        default_factory=dict,
        description="The profile's state kept beside its collection (books: reading positions).",
    )


def is_header(line: object) -> bool:
    """Whether a decoded line is a section header (it names the format)."""
    return isinstance(line, dict) and line.get("format") == FORMAT


def point_line(record: Any) -> str:
    """One point (a qdrant-client `Record`) as its line, without the newline."""
    from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR

    vectors = record.vector if isinstance(record.vector, dict) else {DENSE_VECTOR: record.vector}
    line: dict[str, Any] = {"id": record.id, "payload": record.payload or {}}
    line["dense"] = base64.b64encode(np.asarray(vectors[DENSE_VECTOR], "<f4").tobytes()).decode()
    sparse = vectors.get(SPARSE_VECTOR)
    if sparse is not None:
        line["sparse"] = {"indices": list(sparse.indices), "values": list(sparse.values)}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def decode_dense(value: object) -> list[float]:
    """A dense vector from its base64 float32 text or a list of numbers."""
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except ValueError:
            raw = b"?"
        if len(raw) % 4:
            raise ValueError(f"'dense' is not base64 of float32 values ({DENSE_ENCODING})")
        return np.frombuffer(raw, "<f4").tolist()
    if not isinstance(value, list) or not all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in value
    ):
        raise ValueError(f"'dense' must be {DENSE_ENCODING} text or a list of numbers")
    return value


def open_for_writing(path: Path, compressed: bool) -> IO[str]:
    """A new text file at `path`, gzip-compressed if asked."""
    if compressed:
        return gzip.open(path, "wt", encoding="utf-8", compresslevel=GZIP_LEVEL)
    return path.open("w", encoding="utf-8")
