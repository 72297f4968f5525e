"""`NameMatchRetriever`: items by name, whole name first, then partial, then fuzzy.

The candidate names come from Qdrant: a facet of the name key under the caller's filter gives
every distinct name (once, however many documents hold it) with its number of points. The names
are compared here (rapidfuzz for typos), then the chosen names are fetched back with the same
filter, so the same name in two documents gives two results.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.utils import metadata_dict_to_node
from pydantic import BaseModel
from qdrant_client import models
from rapidfuzz import fuzz, process

from scoperag.core.backend import VectorBackend

MatchKind = Literal["exact", "partial", "fuzzy"]
FUZZY_CUTOFF = 80.0  # rapidfuzz token_sort_ratio: "firebal" ~ "Fireball" scores 93


class NameMatch(BaseModel):
    """One stored name that answers the query, how it matched, and how many points carry it."""

    name: str
    match: MatchKind
    score: float
    count: int


def normalise(name: str) -> str:
    """Case-folded words: 'Crossbow, light' and 'crossbow light' compare equal."""
    return re.sub(r"[\W_]+", " ", name.casefold()).strip()


def _partial(wanted: str, plain: Mapping[str, str]) -> list[tuple[str, float]]:
    """Names containing the query: where it starts a word first ('dragon' in 'Red Dragon')."""
    word_start = re.compile(rf"\b{re.escape(wanted)}")
    found = [(name, text) for name, text in plain.items() if wanted in text]
    found.sort(key=lambda it: (not word_start.search(it[1]), -fuzz.ratio(wanted, it[1]), it[0]))
    return [(name, fuzz.ratio(wanted, text) / 100) for name, text in found]


def match_names(query: str, candidates: Mapping[str, int]) -> list[NameMatch]:
    """The first of: whole-name matches, names containing the query, close spellings."""
    wanted = normalise(query)
    if not wanted:
        return []
    plain = {name: normalise(name) for name in candidates}
    tiers: list[tuple[MatchKind, list[tuple[str, float]]]] = [
        ("exact", [(name, 1.0) for name, text in plain.items() if text == wanted]),
        ("partial", _partial(wanted, plain)),
    ]
    for match, found in tiers:
        if found:
            return [NameMatch(name=n, match=match, score=s, count=candidates[n]) for n, s in found]
    close = process.extract(
        wanted, plain, scorer=fuzz.token_sort_ratio, score_cutoff=FUZZY_CUTOFF, limit=None
    )
    return [
        NameMatch(name=name, match="fuzzy", score=score / 100, count=candidates[name])
        for _, score, name in close
    ]


def _with(flt: models.Filter | None, condition: models.Condition) -> models.Filter:
    """`flt` AND `condition`, kept flat."""
    if flt is None:
        return models.Filter(must=[condition])
    return flt.model_copy(update={"must": [*(flt.must or []), condition]})


class NameMatchRetriever(BaseRetriever):
    """Top-k points of one collection whose name answers the query, under `qdrant_filter`.

    Points sharing a name come back ordered by the payload key `tie_key` (e.g. the document).
    """

    def __init__(
        self,
        backend: VectorBackend,
        collection: str,
        qdrant_filter: models.Filter | None = None,
        top_k: int = 10,
        name_key: str = "name",
        tie_key: str | None = None,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.collection = collection
        self.qdrant_filter = qdrant_filter
        self.top_k = top_k
        self.name_key = name_key
        self.tie_key = tie_key

    def matches(self, query: str) -> list[NameMatch]:
        """The matching names (distinct), best first, with their number of points."""
        if not self.backend.collection_exists(self.collection):
            return []
        points = self.backend.count(self.collection, self.qdrant_filter)
        if not points:
            return []
        names = self.backend.facet(self.collection, self.name_key, self.qdrant_filter, points)
        return match_names(query, {str(name): count for name, count in names.items()})

    def retrieve_matches(self, matches: list[NameMatch]) -> list[NodeWithScore]:
        """The points of the best names, up to `top_k`, in the order of `matches`."""
        chosen: list[NameMatch] = []
        for match in matches:
            if sum(m.count for m in chosen) >= self.top_k:
                break
            chosen.append(match)
        if not chosen:
            return []
        rank = {match.name: position for position, match in enumerate(chosen)}
        names = models.FieldCondition(key=self.name_key, match=models.MatchAny(any=list(rank)))
        records = self.backend.scroll(
            self.collection,
            _with(self.qdrant_filter, names),
            limit=sum(match.count for match in chosen),
        )
        records.sort(
            key=lambda r: (rank[r.payload[self.name_key]], str(r.payload.get(self.tie_key, "")))
        )
        score = {match.name: match.score for match in chosen}
        return [
            NodeWithScore(
                node=metadata_dict_to_node(record.payload),
                score=score[record.payload[self.name_key]],
            )
            for record in records[: self.top_k]
        ]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.retrieve_matches(self.matches(query_bundle.query_str))
