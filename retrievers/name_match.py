"""`NameMatchRetriever`: items by name, whole name first, then partial, then fuzzy.

The candidate names come from Qdrant: a facet of the name key under the caller's filter gives
every distinct name (once, however many documents hold it) with its number of points. The names
are compared here (rapidfuzz) by the best of three similarities: whole string, word order free
and spaces removed, so "fire ball", "featherfall" and "hand axe" name Fireball, Feather Fall
and Handaxe exactly. Then the chosen names are fetched back with the same filter, so the same
name in two documents gives two results, ordered by the documents' priority.
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
from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from scoperag.core.backend import VectorBackend

MatchKind = Literal["exact", "partial", "fuzzy"]
FUZZY_CUTOFF = 80.0  # `similarity` * 100: "fireboll" ~ "Fireball" scores 88
NEAR_EXACT = 0.9  # a fuzzy match this close ranks before names merely containing the query


class NameMatch(BaseModel):
    """One stored name that answers the query, how it matched, and how many points carry it."""

    name: str
    match: MatchKind
    score: float
    count: int


def normalise(name: str) -> str:
    """Case-folded words: 'Crossbow, light' and 'crossbow light' compare equal."""
    return re.sub(r"[\W_]+", " ", name.casefold()).strip()


def _squeezed(text: str) -> str:
    return text.replace(" ", "")


def similarity(wanted: str, text: str) -> float:
    """The best of whole-string, word-order-free and space-free similarity, in [0, 1].

    One slip (a letter dropped, added, changed, or two swapped) in a name of four letters or
    more is close enough to be a fuzzy match however short the name: "tmie" finds Time.
    """
    squeezed = _squeezed(wanted), _squeezed(text)
    best = max(fuzz.ratio(wanted, text), fuzz.token_sort_ratio(wanted, text), fuzz.ratio(*squeezed))
    one_slip = min(map(len, squeezed)) >= 4 and OSA.distance(*squeezed) <= 1
    return max(best / 100, FUZZY_CUTOFF / 100 if one_slip else 0.0)


def _same(wanted: str, text: str) -> bool:
    """Equal once case, punctuation, word order and spaces are set aside."""
    return _squeezed(wanted) == _squeezed(text) or sorted(wanted.split()) == sorted(text.split())


def _contains(wanted: str, text: str) -> bool:
    """The query inside the name ("dragon" in "red dragon"), or the name's words inside the
    query as whole words ("plate" in "plate armor")."""
    return wanted in text or re.search(rf"\b{re.escape(text)}\b", wanted) is not None


def _ranked(wanted: str, plain: Mapping[str, str]) -> list[tuple[MatchKind, str, float]]:
    """Partial and fuzzy matches together: near-exact spellings first, then partial matches
    (those where the query starts a word first), then the other close spellings."""
    found = []
    for name, text in plain.items():
        score = similarity(wanted, text)
        if _contains(wanted, text):
            word_start = re.search(rf"\b{re.escape(wanted)}", text) or text in wanted
            tier = 0 if score >= NEAR_EXACT else 1 if word_start else 2
            found.append((tier, -score, name, "partial", score))
        elif score * 100 >= FUZZY_CUTOFF:
            found.append((0 if score >= NEAR_EXACT else 3, -score, name, "fuzzy", score))
    found.sort()
    return [(kind, name, score) for _, _, name, kind, score in found]


def match_names(query: str, candidates: Mapping[str, int]) -> list[NameMatch]:
    """Whole-name matches if there are any, else partial and fuzzy matches ranked together."""
    wanted = normalise(query)
    if not wanted:
        return []
    plain = {name: normalise(name) for name in candidates}
    exact = [name for name, text in plain.items() if _same(wanted, text)]
    if exact:
        exact.sort(key=lambda name: (plain[name] != wanted, name))
        return [NameMatch(name=n, match="exact", score=1.0, count=candidates[n]) for n in exact]
    return [
        NameMatch(name=name, match=kind, score=score, count=candidates[name])
        for kind, name, score in _ranked(wanted, plain)
    ]


def _with(flt: models.Filter | None, condition: models.Condition) -> models.Filter:
    """`flt` AND `condition`, kept flat."""
    if flt is None:
        return models.Filter(must=[condition])
    return flt.model_copy(update={"must": [*(flt.must or []), condition]})


class NameMatchRetriever(BaseRetriever):
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
        super().__init__()
        self.backend = backend
        self.collection = collection
        self.qdrant_filter = qdrant_filter
        self.top_k = top_k
        self.name_key = name_key
        self.tie_key = tie_key
        self.tie_priority = tie_priority

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
        records.sort(key=lambda r: (rank[r.payload[self.name_key]], self._tie(r.payload)))
        score = {match.name: match.score for match in chosen}
        return [
            NodeWithScore(
                node=metadata_dict_to_node(record.payload),
                score=score[record.payload[self.name_key]],
            )
            for record in records[: self.top_k]
        ]

    def _tie(self, payload: dict) -> tuple[int, str]:
        value = str(payload.get(self.tie_key, "")) if self.tie_key else ""
        priority = self.tie_priority
        return (priority.index(value) if value in priority else len(priority), value)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.retrieve_matches(self.matches(query_bundle.query_str))
