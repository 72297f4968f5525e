"""One declared shape of a search hit: its figures (`Scored`) and where a tool's answer keeps
its hits, their text and what names each one (`HitShape`, declared by each profile).

`score` is the order value, `fusion` says what it is, `similarity` is the cosine similarity of
the hit's text to the query on one scale in every profile (the similarity floor is stated on
it); a hit found by its name alone carries `name_similarity` instead.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, Field

from scoperag.core.engine.backend import order_score

Fusion = Literal["dbsf", "rrf", "dense", "name", "name_order"]
SCORE = "The order value, higher first."
FUSION = "What score is: a fusion (dbsf, rrf), the cosine, a name rank or none."
SIMILARITY = "Cosine similarity to the query (-1 to 1), as floors are; null: found by name."
NAME_SIMILARITY = "The name's similarity to the query, 0 to 1 (found by name)."
# the words a listing states once under the hits
FUSION_WORDS = {
    "dbsf": "meaning and keywords fused (DBSF)",
    "rrf": "reciprocal rank fusion of the search and the name match",
    "dense": "the cosine similarity",
    "name": "the name match's rank",
    "name_order": "alphabetical order",
}
SIMILARITY_WORDS = "similarity is the cosine similarity of the text to the query (-1 to 1)"


class Scored(BaseModel):
    """The figures every search hit carries."""

    score: float | None = Field(default=None, description=SCORE)
    fusion: Fusion | None = Field(default=None, description=FUSION)
    similarity: float | None = Field(default=None, description=SIMILARITY)


class HitShape(NamedTuple):
    """Where one tool's answer keeps its hits: the list `hits`, each hit's text under `text`,
    and the fields that name a hit (`identity`: a hash, a name, a page, a passage)."""

    hits: str = "hits"
    text: str = "text"
    identity: tuple[str, ...] = ()


def engine_figures(point: Any, digits: int | None = None) -> dict[str, Any]:
    """A hit's `score`, `fusion` and `similarity` from the engine's point (a qdrant-client
    `ScoredPoint`: `score` the cosine, `order_value` the fusion score of a hybrid search),
    rounded to `digits` if given."""

    def shown(value: float) -> float:
        return value if digits is None else round(value, digits)

    fusion = "dense" if point.order_value is None else "dbsf"
    return {"score": shown(order_score(point)), "fusion": fusion, "similarity": shown(point.score)}
