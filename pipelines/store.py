"""The last steps every pipeline shares: embed nodes with progress, write them, replace a source."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from llama_index.core.schema import (
    BaseNode,
    MetadataMode,
    NodeRelationship,
    RelatedNodeInfo,
    TransformComponent,
)
from pydantic import ConfigDict, Field

from scoperag.core.config.ingest_limits import checkpoint
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.collections import prepare_for_writing
from scoperag.core.engine.generations import GENERATION_KEY, SOURCE_KEY
from scoperag.core.filters.fields import FieldType, FilterableField
from scoperag.pipelines.point_ids import stable_id

# Keys every replacement filters on (the source and the generation of a point).
REPLACEMENT_INDEXES = [
    FilterableField(name=key, field_type=FieldType.KEYWORD, description=description)
    for key, description in (
        (SOURCE_KEY, "The source a point was ingested from."),
        (GENERATION_KEY, "The ingestion that wrote the point."),
    )
]


class EmbedNodes(TransformComponent):
    """Pipeline step: embeds nodes in batches through the shared embedder, shortest texts first
    (a batch of like lengths pads less: a third less CPU on a whole book), reporting progress;
    a cancelled or late ingestion stops before the next batch."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    embedder: Embedder = Field(exclude=True)
    # A batch is where progress is reported and a stopped ingestion stops: 16 texts take a
    # fraction of a second, and the encoder runs its own smaller batches anyway.
    batch_size: int = 16
    progress: Callable[..., None] | None = Field(default=None, exclude=True)  # a Progress

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: object) -> Sequence[BaseNode]:
        texts = [node.get_content(metadata_mode=MetadataMode.EMBED) for node in nodes]
        by_length = sorted(range(len(nodes)), key=lambda index: len(texts[index]))
        total = len(nodes)
        for start in range(0, total, self.batch_size):
            checkpoint()
            batch = by_length[start : start + self.batch_size]
            vectors = self.embedder.embed_texts([texts[index] for index in batch])
            for index, vector in zip(batch, vectors, strict=True):
                nodes[index].embedding = vector
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


def stamped(nodes: Sequence[BaseNode], generation: str) -> list[BaseNode]:
    """The nodes with `generation` in their payload and point ids of that generation, so the new
    version is written beside the old one instead of over it."""
    ids = {node.node_id: stable_id(node.node_id, generation) for node in nodes}
    for node in nodes:
        node.id_ = ids[node.node_id]
        node.metadata[GENERATION_KEY] = generation
        for hidden_from in (node.excluded_embed_metadata_keys, node.excluded_llm_metadata_keys):
            if GENERATION_KEY not in hidden_from:
                hidden_from.append(GENERATION_KEY)
        for relation, related in node.relationships.items():
            if relation != NodeRelationship.SOURCE and isinstance(related, RelatedNodeInfo):
                related.node_id = ids.get(related.node_id, related.node_id)
    return list(nodes)


def replace_sources(
    backend: VectorBackend,
    embedder: Embedder,
    collection: str,
    fields: Iterable[FilterableField],
    sources: Sequence[str],
    nodes: Sequence[BaseNode],
    keep_ids: Sequence[str] = (),
) -> int:
    """Write the sources' new nodes as one new generation, then retire their other points
    (but `keep_ids`). Readers see the old version or the new one, never a mix; a failure or a
    kill at any moment leaves the old version in place (`core.engine.generations`)."""
    prepare_for_writing(backend, embedder, collection, [*fields, *REPLACEMENT_INDEXES])
    with backend.generations.replacing(collection, sources, keep_ids) as generation:
        if nodes:
            backend.vector_store(collection).add(stamped(nodes, generation))
    return len(nodes)


def replace_source(
    backend: VectorBackend,
    embedder: Embedder,
    collection: str,
    fields: Iterable[FilterableField],
    source_id: str,
    nodes: Sequence[BaseNode],
) -> int:
    """Replace one source's nodes (see `replace_sources`); returns how many were written."""
    return replace_sources(backend, embedder, collection, fields, [source_id], nodes)
