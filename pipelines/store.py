"""The last steps every pipeline shares: embed nodes with progress, write them, drop stale ones."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence

from llama_index.core.schema import BaseNode, MetadataMode, TransformComponent
from pydantic import ConfigDict, Field
from qdrant_client import models

from scoperag.core.backend import VectorBackend
from scoperag.core.collections import prepare_for_writing
from scoperag.core.embeddings import Embedder
from scoperag.core.fields import FilterableField

Progress = Callable[[int, int], None]
SOURCE_KEY = "doc_id"  # where LlamaIndex's QdrantVectorStore keeps a node's ref_doc_id
_NAMESPACE = uuid.UUID("6f1c3a52-5a8e-4d0e-9b52-7c1d2e3f4a5b")


def stable_id(*parts: object) -> str:
    """A UUID derived from the parts, so re-ingesting the same thing overwrites it."""
    return str(uuid.uuid5(_NAMESPACE, "/".join(str(part) for part in parts)))


class EmbedNodes(TransformComponent):
    """Pipeline step: embeds nodes in batches through the shared embedder, reporting progress."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    embedder: Embedder = Field(exclude=True)
    batch_size: int = 64
    progress: Progress | None = Field(default=None, exclude=True)

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: object) -> Sequence[BaseNode]:
        total = len(nodes)
        for start in range(0, total, self.batch_size):
            batch = nodes[start : start + self.batch_size]
            texts = [node.get_content(metadata_mode=MetadataMode.EMBED) for node in batch]
            for node, vector in zip(batch, self.embedder.embed_texts(texts), strict=True):
                node.embedding = vector
            if self.progress:
                self.progress(min(start + self.batch_size, total), total)
        return nodes


def write_nodes(
    backend: VectorBackend,
    embedder: Embedder,
    collection: str,
    fields: Iterable[FilterableField],
    nodes: Sequence[BaseNode],
) -> list[str]:
    """Upsert embedded nodes into `collection`, creating and indexing it first if needed."""
    prepare_for_writing(backend, embedder, collection, fields)
    if not nodes:
        return []
    return backend.vector_store(collection).add(list(nodes))


def drop_stale(
    backend: VectorBackend, collection: str, source_id: str, keep_ids: Iterable[str]
) -> None:
    """Delete the points of `source_id` that the latest ingestion did not write again."""
    keep = list(keep_ids)
    backend.delete(
        collection,
        models.Filter(
            must=[models.FieldCondition(key=SOURCE_KEY, match=models.MatchValue(value=source_id))],
            must_not=[models.HasIdCondition(has_id=keep)] if keep else None,
        ),
    )


def replace_source(
    backend: VectorBackend,
    embedder: Embedder,
    collection: str,
    fields: Iterable[FilterableField],
    source_id: str,
    nodes: Sequence[BaseNode],
) -> int:
    """Write a source's new nodes, then remove its old ones: nothing is lost if writing fails."""
    ids = write_nodes(backend, embedder, collection, fields, nodes)
    drop_stale(backend, collection, source_id, ids)
    return len(ids)
