"""One search of one collection, as every engine takes it, and what it gives back."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from qdrant_client import models

from scoperag.core.embedding.embedders import EmbedderInfo


class SearchRequest(BaseModel):
    """Points of `collection` matching `filter`, best first by cosine similarity to `dense`.

    With `text`, a collection that keeps BM25 vectors ranks by meaning and keywords fused (see
    `VectorBackend.search`); one without is ranked by meaning alone.
    """

    model_config = ConfigDict(frozen=True)

    collection: str
    dense: list[float]
    text: str | None = Field(default=None, description="Keywords ranked beside the vector.")
    filter: models.Filter | None = None
    limit: int
    offset: int = 0
    score_threshold: float | None = Field(
        default=None, description="Only points with at least this cosine are candidates."
    )
    with_payload: bool | list[str] = Field(
        default=True, description="Each hit's payload: all of it, none, or only these keys."
    )
    embedder: EmbedderInfo | None = Field(
        default=None,
        description="The embedder `dense` comes from: a collection built with another is an "
        "error (`EmbedderMismatchError`).",
    )
    count_cap: int | None = Field(
        default=None,
        description="Also count the candidates (matching `filter`, at or above "
        "`score_threshold`), up to this many.",
    )


class SearchResult(BaseModel):
    """The page of hits, and what the search learned about the collection on the way."""

    hits: list[models.ScoredPoint]
    exists: bool = Field(description="False: the collection does not exist (no hits).")
    keywords: bool = Field(description="The collection keeps BM25 vectors.")
    count: int | None = Field(default=None, description="The candidates, up to `count_cap`.")
