"""`qdrant-store` notes: their metadata checked against the keys the pdf profile reads, and
their own source id, so re-ingesting a PDF never deletes a note that names its document."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.utils import node_to_metadata_dict
from qdrant_client import models

from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.collections import prepare_for_writing
from scoperag.core.engine.generations import GENERATION_KEY
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.core.errors import InvalidParameterError
from scoperag.core.filters.fields import FilterableField
from scoperag.pipelines.point_ids import stable_id
from scoperag.pipelines.store import EmbedNodes

STORED_SOURCE = "qdrant-store"
# Keys whose type qdrant-find and qdrant-list-documents rely on: (accepted, check).
_TYPED: dict[str, tuple[str, Any]] = {
    "document_id": ("a non-empty string", lambda v: isinstance(v, str) and bool(v.strip())),
    "page_label": ("a string", lambda v: isinstance(v, str)),
    "source": ("a string", lambda v: isinstance(v, str)),
    "title": ("a string", lambda v: isinstance(v, str)),
    "physical_page_index": (
        "a whole number >= 0",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63,
    ),
}
# Keys only ingestion writes (a note with `chunk_index` would be listed as a page of a PDF) and
# the LlamaIndex / scoperag internals of the payload layout.
_REFUSED = {"chunk_index", "page_count", "_node_content", "_node_type", "doc_id", "ref_doc_id"}
_REFUSED |= {"text", GENERATION_KEY}


def checked_metadata(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """The note's metadata if its reserved keys have the types readers rely on, else an error."""
    metadata = dict(metadata or {})
    for key, value in metadata.items():
        if key in _REFUSED:
            raise InvalidParameterError(
                f"metadata.{key}",
                value,
                "no value: this key is written by ingestion or by the payload layout; "
                f"leave it out (reserved: {', '.join(sorted(_REFUSED))})",
            )
        if key in _TYPED and not _TYPED[key][1](value):
            raise InvalidParameterError(f"metadata.{key}", value, _TYPED[key][0])
    return metadata


def note_point(
    information: str, metadata: dict[str, Any], embedder: Embedder
) -> models.PointStruct:
    """The note as a point in LlamaIndex's payload layout, with a source id of its own."""
    node_id = stable_id("store", information, json.dumps(metadata, sort_keys=True))
    node = TextNode(
        id_=node_id,
        text=information,
        metadata=metadata,
        relationships={
            NodeRelationship.SOURCE: RelatedNodeInfo(node_id=f"{STORED_SOURCE}/{node_id}")
        },
    )
    EmbedNodes(embedder=embedder)([node])
    payload = node_to_metadata_dict(node, remove_text=False, flat_metadata=False)
    # LlamaIndex writes the source id into `document_id` too: the note's own value wins there.
    payload["document_id"] = metadata.get("document_id", STORED_SOURCE)
    return models.PointStruct(
        id=node_id, vector={DENSE_VECTOR: node.get_embedding()}, payload=payload
    )


def store_note(
    backend: VectorBackend,
    embedder: Embedder,
    collection: str,
    indexes: Sequence[FilterableField],
    information: str,
    metadata: dict[str, Any] | None,
) -> str:
    """Check, embed and write one note; returns its point id."""
    point = note_point(information, checked_metadata(metadata), embedder)
    prepare_for_writing(backend, embedder, collection, indexes)
    backend.upsert_points(collection, [point])
    return str(point.id)
