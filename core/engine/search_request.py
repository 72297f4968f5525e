"""One search of one collection, as every engine takes it, and what it gives back."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from qdrant_client import models

from scoperag.core.embedding.embedders import EmbedderInfo

# Each prefetch of a hybrid search fetches at least this many candidates for the fusion.
FUSION_CANDIDATES = 100


class DateBoost(BaseModel):
    """A boost by closeness in time: `weight` added to a hit's order score when its `key`
    (Unix seconds) falls in [`start`, `end`), falling off as a Gaussian of its distance from
    that period (half at `scale` seconds away). It reorders; it never drops a hit."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(description="The payload key holding each point's time, Unix seconds.")
    text: str = Field(description="The words of the query the date was read from.")
    unit: Literal["day", "month", "year"]
    start: float = Field(description="The period's first second, Unix seconds.")
    end: float = Field(description="The second after the period, Unix seconds.")
    scale: float = Field(gt=0, description="Seconds from the period where the boost halves.")
    weight: float = Field(gt=0, description="The boost inside the period.")


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
    explain: bool = Field(
        default=False,
        description="Also rank the candidates by each branch alone (`SearchResult.branches`).",
    )
    date_boost: DateBoost | None = Field(
        default=None, description="Reorder the hits by closeness to a date (a formula query)."
    )
    keyword_candidates: bool = Field(
        default=True,
        description="Hybrid: BM25's own top candidates under the filter (at or above "
        "`score_threshold`) join the dense ones before the fusion; False: keywords only "
        "re-rank the dense candidates.",
    )

    @property
    def prefetch_limit(self) -> int:
        """How many candidates each ranking of a hybrid search reads."""
        return max(self.offset + self.limit, FUSION_CANDIDATES)


def candidate_union(first: list[Any], second: list[Any]) -> list[Any]:
    """The points of `first`, then those of `second` not among them (by id)."""
    seen = {point.id for point in first}
    return first + [point for point in second if point.id not in seen]


class SearchResult(BaseModel):
    """The page of hits, and what the search learned about the collection on the way."""

    hits: list[models.ScoredPoint]
    exists: bool = Field(description="False: the collection does not exist (no hits).")
    keywords: bool = Field(description="The collection keeps BM25 vectors.")
    count: int | None = Field(default=None, description="The candidates, up to `count_cap`.")
    branches: Branches | None = Field(default=None, description="With `explain`: the rankings.")


class BranchHit(BaseModel):
    """A point in one ranking: its id and its score there."""

    id: int | str
    score: float


class Branches(BaseModel):
    """The rankings behind a page (`SearchRequest.explain`), each `prefetch_limit` deep under
    the request's filter, best first, as the engine gives them."""

    prefetch_limit: int
    floor: float | None = Field(description="The request's `score_threshold`.")
    dense: list[BranchHit] = Field(description="Nearest neighbours by cosine, with no floor.")
    bm25: list[BranchHit] | None = Field(
        default=None, description="The BM25 ranking of the text alone; None: no keyword branch."
    )
    fused: list[BranchHit] | None = Field(
        default=None, description="The fusion of every candidate (ids only); None: no fusion."
    )
    date_boost: DateBoost | None = Field(
        default=None, description="Reorder the hits by closeness to a date (a formula query)."
    )
    keyword_candidates: bool = Field(
        default=False, description="BM25's own top candidates joined the dense ones."
    )
