"""memories pipeline: memories (one, or a JSON file of them) -> one embedded point each in Qdrant.

A memory's point id derives from its content hash, so storing the same content again finds it
already there: it is reported as a duplicate, not embedded or written a second time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from qdrant_client import models

from scoperag.core.config.ingest_limits import check_count, checkpoint, first_problems, open_source
from scoperag.core.config.open_beneath import SourceRefusedError
from scoperag.core.config.settings import Settings
from scoperag.core.contracts.memory import (
    COLLECTION,
    DEFAULT_MEMORY_TYPE,
    MemoryPayload,
    content_hash,
    memory_indexes,
    normalise_tags,
    parse_expiry,
    parse_moment,
    rfc3339,
)
from scoperag.core.embedding.bm25 import document_vector
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.collections import prepare_for_writing
from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR
from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.core.progress import Progress
from scoperag.pipelines.memory_order import assign_order, writers_take_turns
from scoperag.pipelines.point_ids import stable_id

_LLM_KEYS = {"tags", "memory_type", "created_at"}  # what a query engine's LLM sees beside the text
# Keys a memory in a file may use for its fields (the devbench format says created_at_iso).
_TIME_KEYS = ("created_at", "created_at_iso", "timestamp")
_TYPE_KEYS = ("memory_type", "type")


def make_memory(
    content: str,
    tags: str | list[str] | None = None,
    memory_type: str | None = None,
    created_at: object = None,
    metadata: dict[str, Any] | None = None,
    expires_at: str | None = None,
) -> MemoryPayload:
    """A memory's payload (a first version) from what a caller gives; the creation time
    defaults to now, and an expiry must be RFC 3339 with a zone."""
    text = content.strip() if isinstance(content, str) else ""
    if not text:
        raise InvalidParameterError("content", content, "a non-empty text")
    kind = memory_type.strip() if isinstance(memory_type, str) else memory_type
    if kind is not None and (not isinstance(kind, str) or not kind):
        raise InvalidParameterError("memory_type", memory_type, "a non-empty string")
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidParameterError("metadata", metadata, "an object (JSON dict)")
    moment = datetime.now(UTC) if created_at is None else parse_moment(created_at)
    expiry = None if expires_at is None else parse_expiry(expires_at)
    hash_ = content_hash(text)
    return MemoryPayload(
        content=text,
        content_hash=hash_,
        tags=normalise_tags(tags) or [],
        memory_type=kind or DEFAULT_MEMORY_TYPE,
        created_at=rfc3339(moment),
        created_at_ts=moment.timestamp(),
        metadata=metadata or {},
        lineage=hash_,
        updated_at=rfc3339(moment),
        expires_at=None if expiry is None else rfc3339(expiry),
        expires_ts=None if expiry is None else expiry.timestamp(),
    )


def memory_id(hash_: str) -> str:
    """The point id of the memory with this content hash."""
    return stable_id("memory", hash_)


def memory_point(memory: MemoryPayload, vector: list[float], keywords: bool) -> models.PointStruct:
    """A memory as one point in LlamaIndex's payload layout (a text node whose content alone is
    embedded), with its BM25 vector when the collection keeps keywords."""
    metadata = memory.model_dump(mode="json")
    point_id = memory_id(memory.content_hash)
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
    from llama_index.core.vector_stores.utils import node_to_metadata_dict

    node = TextNode(
        id_=point_id,
        text=memory.content,
        metadata=metadata,
        excluded_embed_metadata_keys=list(metadata),
        excluded_llm_metadata_keys=[key for key in metadata if key not in _LLM_KEYS],
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=memory.content_hash)},
    )
    payload = node_to_metadata_dict(node, remove_text=False, flat_metadata=False)
    vectors: dict[str, Any] = {DENSE_VECTOR: vector}
    if keywords:
        vectors[SPARSE_VECTOR] = document_vector(memory.content)
    return models.PointStruct(id=point_id, vector=vectors, payload=payload)


class StoreReport(BaseModel):
    """Outcome of storing a batch of memories."""

    stored: list[str] = Field(default_factory=list, description="Content hashes newly stored.")
    duplicates: list[str] = Field(
        default_factory=list, description="Content hashes that were already stored (kept as is)."
    )


def existing_hashes(backend: VectorBackend, hashes: Sequence[str]) -> set[str]:
    """Which of these content hashes are stored already (one filtered scroll)."""
    if not hashes or not backend.collection_exists(COLLECTION):
        return set()
    flt = models.Filter(must=[models.HasIdCondition(has_id=[memory_id(h) for h in hashes])])
    records = backend.scroll(COLLECTION, flt, limit=len(hashes))
    return {(record.payload or {}).get("content_hash") for record in records} & set(hashes)


def store_memories(
    backend: VectorBackend,
    embedder: Embedder,
    memories: Sequence[MemoryPayload],
    progress: Progress | None = None,
    batch_size: int = 256,
    data_dir: Path | None = None,
) -> StoreReport:
    """Embed and write the memories not stored yet, in batches; the rest are duplicates.

    Each batch is embedded first, then given its order keys and written while this data dir's
    writers take turns (`data_dir`, default the settings'), so keys stay unique across
    processes. Memories stored before the order key existed get theirs at a process's first
    newest-first read (`backfill_order`), which new keys never collide with."""
    turns = data_dir or Settings().data_dir
    with writers_take_turns(turns):  # the first writer creates the collection, the rest wait
        prepare_for_writing(backend, embedder, COLLECTION, memory_indexes())
    keywords = backend.has_keywords(COLLECTION)
    report = StoreReport()
    first: dict[str, MemoryPayload] = {}
    for memory in memories:
        if memory.content_hash in first:
            report.duplicates.append(memory.content_hash)
        first.setdefault(memory.content_hash, memory)
    unique = list(first.values())
    for start in range(0, len(unique), batch_size):
        batch = unique[start : start + batch_size]
        stored = existing_hashes(backend, [memory.content_hash for memory in batch])
        new = [memory for memory in batch if memory.content_hash not in stored]
        vectors = embedder.embed_texts([memory.content for memory in new]) if new else []
        checkpoint()  # a cancelled or late import stops here, before this batch is written
        with writers_take_turns(turns):
            stored |= existing_hashes(backend, [memory.content_hash for memory in new])
            fresh = [
                (m, v) for m, v in zip(new, vectors, strict=True) if m.content_hash not in stored
            ]
            assign_order(backend, [memory for memory, _ in fresh])
            points = [memory_point(memory, vector, keywords) for memory, vector in fresh]
            if points:
                backend.upsert_points(COLLECTION, points)
        report.duplicates += [m.content_hash for m in batch if m.content_hash in stored]
        report.stored += [memory.content_hash for memory, _ in fresh]
        if progress:
            progress(start + len(batch), len(unique))
    return report


def _first(item: dict[str, Any], keys: Iterable[str]) -> Any:
    return next((item.pop(key) for key in list(keys) if key in item), None)


def memory_from_item(item: object) -> MemoryPayload:
    """A memory from one JSON object; keys other than the known ones go into its metadata."""
    if not isinstance(item, dict):
        raise ScoperagError(f"expected a JSON object with 'content', got {type(item).__name__}")
    rest = dict(item)
    if "content" not in rest:
        raise ScoperagError("it has no 'content'")
    content = rest.pop("content")
    tags = rest.pop("tags", None)
    memory_type = _first(rest, _TYPE_KEYS)
    created_at = _first(rest, _TIME_KEYS)
    metadata, expires_at = rest.pop("metadata", None), rest.pop("expires_at", None)
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidParameterError("metadata", metadata, "an object (JSON dict)")
    extra = {**rest, **(metadata or {})}
    return make_memory(content, tags, memory_type, created_at, extra, expires_at)


class ImportReport(StoreReport):
    """Outcome of importing one file: what was stored, already there, or skipped and why."""

    file: str
    skipped: list[str] = Field(
        default_factory=list, description="One line per item skipped (the first 100)."
    )
    skipped_count: int = Field(default=0, description="How many items were skipped in all.")


def read_memories(path: Path) -> tuple[list[MemoryPayload], list[str]]:
    """Memories of a JSON file (a list, or an object with a `memories` list); bad items listed."""
    try:
        with open_source(path) as file:
            data = json.loads(file.read().decode("utf-8"))
    except SourceRefusedError as exc:
        raise ScoperagError(f"{path}: not read, {exc}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScoperagError(f"{path}: not a readable JSON file ({exc})") from None
    items = data.get("memories") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ScoperagError(
            f"{path}: expected a JSON list of memories or an object with a 'memories' list"
        )
    try:
        check_count(len(items), "items")
    except SourceRefusedError as exc:
        raise ScoperagError(f"{path}: not read, {exc}") from None
    memories, skipped = [], []
    for index, item in enumerate(items):
        try:
            memories.append(memory_from_item(item))
        except (ScoperagError, ValueError, TypeError) as exc:
            skipped.append(f"item {index}: skipped, {exc}")
    return memories, skipped


def import_memories(
    path: Path,
    backend: VectorBackend,
    embedder: Embedder,
    progress: Progress | None = None,
    data_dir: Path | None = None,
) -> ImportReport:
    """Import a JSON file of memories; a bad item is reported and skipped, duplicates kept once."""
    memories, skipped = read_memories(path)
    stored = (
        store_memories(backend, embedder, memories, progress, data_dir=data_dir)
        if memories
        else StoreReport()
    )
    return ImportReport(
        file=str(path),
        skipped=first_problems(skipped),
        skipped_count=len(skipped),
        **stored.model_dump(),
    )
