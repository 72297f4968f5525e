"""Why each hit is where it is: the engine's figures for a search's hits and what was dropped.

A search run with `explain` gets from the engine each ranking alone, under the same filter
(`SearchResult.branches`); these models say, for a hit, its dense and BM25 score and rank,
its fused score and rank, and, for the result, the filter as applied, the candidates each
branch returned and the candidates the floor, the spoiler gate, de-duplication or the limit
dropped. Nothing here re-scores anything: every figure is one the engine returned.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field, WithJsonSchema

if TYPE_CHECKING:  # the models are read when the tools are listed, before any engine is opened
    from qdrant_client import models

    from scoperag.core.engine.backend import VectorBackend
    from scoperag.core.engine.search_request import BranchHit, DateBoost, SearchResult

SHOWN_DROPS = 20  # the dropped candidates listed; `dropped_total` counts them all
Method = Literal["dbsf", "rrf", "dense", "name", "name_order"]
Stage = Literal["floor", "gate", "dedup", "limit"]
Result = TypeVar("Result", bound=BaseModel)


def _absent_if_none(value: object) -> bool:
    return value is None


class ScoreRank(BaseModel):
    score: float = Field(description="The score in this ranking.")
    rank: int = Field(description="1-based rank in this ranking.")


class FusedFigures(BaseModel):
    score: float | None = Field(default=None, description="What the hits are ordered by.")
    rank: int = Field(description="1-based rank among the results (the hits' order).")
    method: Method = Field(
        description="dbsf: the engine's fusion of dense and BM25; rrf: reciprocal rank fusion "
        "of the search and the name match; dense: cosine alone; name: the name match; "
        "name_order: alphabetical (no query)."
    )


class NameMatchFigures(BaseModel):
    kind: Literal["exact", "prefix", "fuzzy"] = Field(
        description="exact: the whole name; prefix: a name containing the query; fuzzy: a close "
        "spelling."
    )
    score: float = Field(description="The name's similarity to the query, 0 to 1.")


class HitExplain(BaseModel):
    """Where one hit stood in each ranking (null: that ranking did not return it)."""

    dense: ScoreRank | None = Field(
        default=None, description="Cosine and rank in the dense-only search."
    )
    bm25: ScoreRank | None = Field(
        default=None, description="Score and rank in the BM25-only search."
    )
    fused: FusedFigures
    similarity: float | None = Field(
        default=None, description="The hit's cosine similarity, which the floor compares."
    )
    found_by: list[Literal["dense", "bm25"]] = Field(
        default_factory=list,
        description="The branches whose own top candidates held it (hybrid: either brings a "
        "candidate into the fusion).",
    )
    name_match: NameMatchFigures | None = Field(default=None, exclude_if=_absent_if_none)
    date_boost: float | None = Field(
        default=None,
        exclude_if=_absent_if_none,
        description="What the date the query names added to its fused score.",
    )


class Dropped(BaseModel):
    stage: Stage
    id: int | str = Field(description="The point's id (a name lookup: the name).")
    identity: dict[str, Any] | None = Field(
        default=None, description="What names it, as the hits are named (a hash, a name, a page)."
    )
    reason: str
    score: float | None = Field(default=None, description="Its score at that stage.")


class Candidates(BaseModel):
    dense: int = Field(description="Candidates the dense branch returned.")
    bm25: int | None = Field(
        default=None, description="Candidates the BM25 branch returned; null: none ran."
    )


class DateRead(BaseModel):
    """The date read in the query and the boost it gives (never a filter)."""

    text: str = Field(description="The words it was read from.")
    unit: Literal["day", "month", "year"]
    start: str = Field(description="The period's first moment, RFC 3339.")
    end: str = Field(description="The moment after the period, RFC 3339.")
    scale_days: float = Field(description="Days from the period where the boost halves.")
    weight: float = Field(description="The boost inside the period.")


class ResultExplain(BaseModel):
    """The filter as applied, the branches' depth and yield, and what was dropped after."""

    filter: dict[str, Any] | None = Field(
        default=None, description="qdrant-client's Filter as JSON, as applied."
    )
    prefetch_limit: int = Field(description="How deep each branch ranked.")
    candidates: Candidates
    dropped: list[Dropped] = Field(description=f"The first {SHOWN_DROPS} dropped candidates.")
    dropped_total: int
    date: DateRead | None = Field(
        default=None, exclude_if=_absent_if_none, description="The date the query names."
    )


def filter_json(flt: models.Filter | None) -> dict[str, Any] | None:
    return None if flt is None else flt.model_dump(mode="json", exclude_none=True)


def _ranks(ranking: list[BranchHit] | None) -> dict[Hashable, ScoreRank]:
    return {hit.id: ScoreRank(score=hit.score, rank=n) for n, hit in enumerate(ranking or [], 1)}


# point ids -> what names each point (its payload's identity fields)
Names = Callable[[list[Hashable]], dict[Hashable, dict[str, Any]]]


def payload_names(backend: VectorBackend, collection: str, keys: Sequence[str]) -> Names:
    """`Names` read from the points' payloads in `collection`: the `keys` each one has."""
    from qdrant_client import models

    def names(ids: list[Hashable]) -> dict[Hashable, dict[str, Any]]:
        if not ids:
            return {}
        flt = models.Filter(must=[models.HasIdCondition(has_id=list(ids))])  # type: ignore[arg-type]
        return {
            record.id: {key: record.payload[key] for key in keys if key in record.payload}
            for record in backend.scroll(collection, flt, len(ids))
            if record.payload
        }

    return names


class Explainer:
    """The explain figures of one search from its result (run with `explain`); `names` names
    the dropped candidates shown."""

    def __init__(
        self,
        found: SearchResult,
        flt: models.Filter | None,
        names: Names | None = None,
        boost: DateBoost | None = None,
    ) -> None:
        from scoperag.core.engine.search_request import Branches

        self.boost = boost
        self.branches = found.branches or Branches(prefetch_limit=0, floor=None, dense=[])
        self.filter = flt
        self.names = names
        self.dense = _ranks(self.branches.dense)
        self.bm25 = _ranks(self.branches.bm25) if self.branches.bm25 is not None else None
        self.fused = _ranks(self.branches.fused) if self.branches.fused is not None else None
        self.drops: list[Dropped] = []

    @property
    def method(self) -> Method:
        return "dense" if self.fused is None else "dbsf"

    def hit(self, point_id: Hashable, rank: int, hit: Any) -> HitExplain:
        """The explanation of `hit` (a result's hit: its `score`, `fusion` and `similarity`),
        the point `point_id` at `rank` (1-based) among the results. Its figures are the hit's
        own, copied: only the ranks in each branch come from the rankings."""
        dense = self.dense.get(point_id)
        bm25 = None if self.bm25 is None else self.bm25.get(point_id)
        similarity = getattr(hit, "similarity", None)
        if dense is not None and similarity is not None:
            dense = ScoreRank(score=similarity, rank=dense.rank)
        found_by: list[Literal["dense", "bm25"]] = ["dense"] if dense else []
        if bm25 and self.branches.keyword_candidates:
            found_by.append("bm25")
        fused = FusedFigures(
            score=getattr(hit, "score", None),
            rank=rank,
            method=getattr(hit, "fusion", None) or self.method,
        )
        return HitExplain(
            dense=dense, bm25=bm25, fused=fused, similarity=similarity, found_by=found_by
        )

    def date_boost(self, point: models.ScoredPoint) -> float | None:
        """What the date the query names added to the point's fused score: its order value
        less its score in the fusion without the boost (both the engine's; a decay adds
        nothing below zero, so a difference below it is the engine's float rounding)."""
        unboosted = (self.fused or {}).get(point.id)
        if self.boost is None or unboosted is None or point.order_value is None:
            return None
        return round(max(0.0, point.order_value - unboosted.score), 6)

    def candidates(self) -> Candidates:
        floor = self.branches.floor
        above = [hit for hit in self.branches.dense if floor is None or hit.score >= floor]
        bm25 = self.branches.bm25
        return Candidates(dense=len(above), bm25=None if bm25 is None else len(bm25))

    def floor_drops(self) -> None:
        """Drops by the floor: the dense candidates below it."""
        floor = self.branches.floor
        for n, hit in enumerate(self.branches.dense, 1):
            if floor is not None and hit.score < floor:
                reason = f"cosine {hit.score:.4f} below the floor {floor:.4f} (dense rank {n})"
                self.drops.append(Dropped(stage="floor", id=hit.id, reason=reason, score=hit.score))

    def engine_drops(self, shown: set[Hashable]) -> None:
        """Drops by the floor, and by the limit: the candidates the engine's fusion (else the
        cosine) ranked after the last shown one, as the hits were ranked."""
        self.floor_drops()
        floor = self.branches.floor
        kept = self.branches.fused
        if kept is None:
            kept = [hit for hit in self.branches.dense if floor is None or hit.score >= floor]
        ranking: list[tuple[Hashable, float | None]] = [(hit.id, hit.score) for hit in kept]
        self.past_limit(ranking, shown, self.method)

    def past_limit(
        self, ranking: list[tuple[Hashable, float | None]], shown: set[Hashable], what: str
    ) -> None:
        """Each of `ranking` ranked after the last shown one: dropped by the limit."""
        last = max((n for n, (key, _) in enumerate(ranking) if key in shown), default=-1)
        for n, (key, score) in enumerate(ranking[last + 1 :], last + 2):
            reason = f"{what} rank {n}, past the last result"
            self.drops.append(Dropped(stage="limit", id=key, reason=reason, score=score))  # type: ignore[arg-type]

    def result(self) -> ResultExplain:
        return ResultExplain(
            filter=filter_json(self.filter),
            prefetch_limit=self.branches.prefetch_limit,
            candidates=self.candidates(),
            dropped=named(self.drops[:SHOWN_DROPS], self.names),
            dropped_total=len(self.drops),
            date=None if self.boost is None else _date_read(self.boost),
        )


def named(drops: list[Dropped], names: Names | None) -> list[Dropped]:
    """`drops`, each without an `identity` given the one `names` finds for its id."""
    if names is None:
        return drops
    found = names([drop.id for drop in drops if drop.identity is None])
    for drop in drops:
        drop.identity = drop.identity or found.get(drop.id)
    return drops


def _date_read(boost: DateBoost) -> DateRead:
    from datetime import UTC, datetime

    def moment(seconds: float) -> str:
        return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")

    return DateRead(
        text=boost.text,
        unit=boost.unit,
        start=moment(boost.start),
        end=moment(boost.end),
        scale_days=round(boost.scale / 86_400, 3),
        weight=boost.weight,
    )


# A result model's fields: absent from its output unless the search ran with `explain`. In a
# tool's output schema each is an object, its figures documented in docs/explain.md: listed in
# full, the two would be half of a `tools/list`.
HitExplanation = Annotated[
    HitExplain | None, WithJsonSchema({"type": "object"}), Field(exclude_if=_absent_if_none)
]
ResultExplanation = Annotated[
    ResultExplain | None, WithJsonSchema({"type": "object"}), Field(exclude_if=_absent_if_none)
]


def explained(
    result: Result,
    hits: Sequence[Any],
    found: SearchResult,
    flt: models.Filter | None,
    offset: int = 0,
    names: Names | None = None,
    boost: DateBoost | None = None,
) -> Result:
    """`result` whose `hits` (made from `found.hits`, in order, after `offset` others) and
    itself carry `explain`; `names` names the dropped candidates; with `boost`, the date read
    and what it added to each hit."""
    why = Explainer(found, flt, names, boost)
    for rank, (hit, point) in enumerate(zip(hits, found.hits, strict=True), offset + 1):
        hit.explain = why.hit(point.id, rank, hit)
        hit.explain.date_boost = why.date_boost(point)
    why.engine_drops({point.id for point in found.hits})
    result.explain = why.result()  # type: ignore[attr-defined]
    return result
