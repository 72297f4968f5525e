"""BM25 sparse vectors from Qdrant's own BM25 model (qdrant-edge's `Bm25`), on every engine.

Documents are encoded when they are written (term frequencies normalised by length); queries
when they are searched (each distinct term weighs 1). The engine multiplies by the inverse
document frequency it keeps per collection (the sparse vector's IDF modifier), so the product
is the BM25 score. One tokenizer (English words, lower-cased, stop words dropped, stemmed) for
every engine keeps a collection's sparse vectors valid when it migrates between engines.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from qdrant_client import models

if TYPE_CHECKING:
    import qdrant_edge as edge


@cache
def _model() -> edge.Bm25:
    import qdrant_edge as edge

    return edge.Bm25()


def _plain(vector: Any) -> models.SparseVector:
    return models.SparseVector(indices=list(vector.indices), values=list(vector.values))


def document_vector(text: str) -> models.SparseVector:
    """The BM25 document vector of `text` (what is stored beside the dense vector)."""
    return _plain(_model().embed_document(text))


def query_vector(text: str) -> models.SparseVector:
    """The BM25 query vector of `text`: each distinct term with weight 1."""
    return _plain(_model().embed_query(text))


def node_text(payload: dict[str, Any]) -> str:
    """The text a stored node is keyword-indexed by: what was embedded (LlamaIndex's layout).

    A point not in LlamaIndex's layout (no `_node_content`) has no text to index: "".
    """
    if "_node_content" not in payload:
        return ""
    from llama_index.core.schema import MetadataMode
    from llama_index.core.vector_stores.utils import metadata_dict_to_node

    return metadata_dict_to_node(payload).get_content(metadata_mode=MetadataMode.EMBED)
