"""`NameSearch`: items by name, whole name first, then partial, then fuzzy.

The candidate names come from Qdrant: a facet of the name key under the caller's filter gives
every distinct name (once, however many documents hold it) with its number of points. The names
are ranked by `retrievers.name_match` (rapidfuzz): "fire ball", "featherfall" and "hand axe"
name Fireball, Feather Fall and Handaxe exactly. Then the chosen names are fetched back with the
same filter, so the same name in two documents gives two results, ordered by the documents'
priority. No LlamaIndex here: the tools search with this class; `NameMatchRetriever`
(`retrievers/name_retriever.py`) is the same search as a LlamaIndex retriever.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qdrant_client import models

from scoperag.core.engine.backend import VectorBackend
from scoperag.core.filters.fields import narrowed
from scoperag.retrievers.name_match import NameMatch, close_names, exact_names


def _with(flt: models.Filter | None, condition: models.Condition) -> models.Filter:
    """`flt` AND `condition`, kept flat."""
    return narrowed(flt, must=[condition])


@dataclass
class NameHits:
    """The names answering a query under a filter: those counted (best first, each held by
    at least one point) and the candidates after them, not counted yet."""

    matches: list[NameMatch]
    uncounted: list[str]


class NameSearch:
    """Top-k points of one collection whose name answers the query, under `qdrant_filter`.

    Points sharing a name come back ordered by the payload key `tie_key` (e.g. the document):
    the values listed in `tie_priority` first, in that order, then the others alphabetically.
    """

    def __init__(
        self,
        backend: VectorBackend,
        collection: str,
        qdrant_filter: models.Filter | None = None,
        top_k: int = 10,
        name_key: str = "name",
        tie_key: str | None = None,
        tie_priority: tuple[str, ...] = (),
    ) -> None:
        self.backend = backend
        self.collection = collection
        self.qdrant_filter = qdrant_filter
        self.top_k = top_k
        self.name_key = name_key
        self.tie_key = tie_key
        self.tie_priority = tie_priority

    def find(self, query: str, enough: int | None = None) -> NameHits:
        """The names the filter keeps that answer the query: whole names if any, else partial
        and fuzzy ones; with `enough`, counting stops once the names found hold that many points.

        Candidates come from every name the collection holds (`key_values`, kept between
        writes); only they are counted under the filter, a few at a time.
        """
        if not self.backend.collection_exists(self.collection):
            return NameHits([], [])
        names = [str(name) for name in self.backend.key_values(self.collection, self.name_key)]
        exact = self._counted(exact_names(query, names), None)
        return exact if exact.matches else self._counted(close_names(query, names), enough)

    def _names_filter(self, names: list[str]) -> models.Filter:
        condition = models.FieldCondition(key=self.name_key, match=models.MatchAny(any=names))
        return _with(self.qdrant_filter, condition)

    def _counted(self, candidates: list[NameMatch], enough: int | None) -> NameHits:
        """The candidates the filter keeps, with their counts (one facet per batch)."""
        found: list[NameMatch] = []
        batch = max(2 * (enough or len(candidates)), 16)
        for start in range(0, len(candidates), batch):
            if enough is not None and sum(match.count for match in found) >= enough:
                return NameHits(found, [match.name for match in candidates[start:]])
            chunk = candidates[start : start + batch]
            names = [match.name for match in chunk]
            counts = self.backend.facet(
                self.collection, self.name_key, self._names_filter(names), len(names)
            )
            found += [
                m.model_copy(update={"count": counts[m.name]}) for m in chunk if m.name in counts
            ]
        return NameHits(found, [])

    def total(self, hits: NameHits) -> int:
        """How many points hold the names `find` found, counted or not."""
        counted = sum(match.count for match in hits.matches)
        if not hits.uncounted:
            return counted
        return counted + self.backend.count(self.collection, self._names_filter(hits.uncounted))

    def matched_records(self, matches: list[NameMatch]) -> list[tuple[Any, float]]:
        """The points of the best names, up to `top_k`, in the order of `matches`, each with
        its name's score (records as the engine returns them: no nodes built)."""
        chosen: list[NameMatch] = []
        for match in matches:
            if sum(m.count for m in chosen) >= self.top_k:
                break
            chosen.append(match)
        if not chosen:
            return []
        rank = {match.name: position for position, match in enumerate(chosen)}
        records = self.backend.scroll(
            self.collection,
            self._names_filter(list(rank)),
            limit=sum(match.count for match in chosen),
        )
        records.sort(key=lambda r: (rank[r.payload[self.name_key]], self._tie(r.payload)))
        score = {match.name: match.score for match in chosen}
        return [(record, score[record.payload[self.name_key]]) for record in records[: self.top_k]]

    def _tie(self, payload: dict) -> tuple[int, str]:
        value = str(payload.get(self.tie_key, "")) if self.tie_key else ""
        priority = self.tie_priority
        return (priority.index(value) if value in priority else len(priority), value)
