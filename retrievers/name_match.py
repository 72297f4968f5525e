"""Names ranked against a query: whole name first, then partial, then fuzzy (rapidfuzz), by the
best of three similarities: whole string, word order free and spaces removed, so "fire ball",
"featherfall" and "hand axe" name Fireball, Feather Fall and Handaxe exactly. The engine's side
of a name search is `retrievers.name_search.NameSearch`.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

MatchKind = Literal["exact", "partial", "fuzzy"]
FUZZY_CUTOFF = 80.0  # `similarity` * 100: "fireboll" ~ "Fireball" scores 88
NEAR_EXACT = 0.9  # a fuzzy match this close ranks before names merely containing the query
TIERS = 4  # near-exact, partial at a word start, other partial, fuzzy: the order of `_ranked`


class NameMatch(BaseModel):
    """One stored name that answers the query, how it matched, and how many points carry it."""

    name: str
    match: MatchKind
    score: float = Field(description="What the matches are ordered by, 0 to 1 (exact: 1).")
    similarity: float = Field(description="The name's similarity to the query, 0 to 1.")
    count: int


def normalise(name: str) -> str:
    """Case-folded words: 'Crossbow, light' and 'crossbow light' compare equal."""
    return re.sub(r"[\W_]+", " ", name.casefold()).strip()


def _squeezed(text: str) -> str:
    return text.replace(" ", "")


@dataclass(frozen=True)
class _NameTable:
    """A list of names in the forms they are compared in, built once per list."""

    names: tuple[str, ...]
    plain: tuple[str, ...]  # normalised
    squeezed: tuple[str, ...]  # normalised, spaces removed
    by_form: dict[str, list[int]]  # squeezed form or sorted words -> positions
    by_plain: dict[str, list[int]]  # normalised form -> positions
    joined: str  # the normalised forms, one a line (normalised text holds no line break)
    starts: tuple[int, ...]  # where each form starts in `joined`
    most_words: int  # words in the longest normalised form

    @classmethod
    def of(cls, names: tuple[str, ...]) -> _NameTable:
        plain = tuple(normalise(name) for name in names)
        by_form: dict[str, list[int]] = {}
        by_plain: dict[str, list[int]] = {}
        for position, text in enumerate(plain):
            for form in {_squeezed(text), _word_set(text)}:
                by_form.setdefault(form, []).append(position)
            by_plain.setdefault(text, []).append(position)
        starts = tuple(itertools.accumulate((len(text) + 1 for text in plain[:-1]), initial=0))
        squeezed = tuple(_squeezed(text) for text in plain)
        most_words = max((text.count(" ") + 1 for text in plain), default=0)
        joined = "\n".join(plain)
        return cls(names, plain, squeezed, by_form, by_plain, joined, starts, most_words)

    def containing(self, wanted: str) -> set[int]:
        """Positions of the names that contain the (normalised) query ("dragon" in "red
        dragon") or are whole words of it ("plate" in "plate armor"): a string search over
        all names at once, and a lookup per run of the query's words no longer than the
        longest name (a pasted paragraph costs its length times that, not its length squared)."""
        found: set[int] = set()
        at = self.joined.find(wanted)
        while at >= 0:  # the query inside a name
            position = bisect.bisect_right(self.starts, at) - 1
            found.add(position)
            following = position + 1
            if following == len(self.starts):
                break
            at = self.joined.find(wanted, self.starts[following])
        words = wanted.split(" ")
        for first in range(len(words)):  # a name that is whole words of the query
            for last in range(first + 1, min(len(words), first + self.most_words) + 1):
                found.update(self.by_plain.get(" ".join(words[first:last]), ()))
        return found


def _word_set(text: str) -> str:
    """The words in sorted order, marked so it never equals a squeezed form."""
    return "\0" + " ".join(sorted(text.split()))


@lru_cache(maxsize=16)
def _table(names: tuple[str, ...]) -> _NameTable:
    return _NameTable.of(names)


def _similarities(wanted: str, plain: Sequence[str], squeezed: Sequence[str]) -> np.ndarray:
    """`similarity(wanted, text)` for every text at once (rapidfuzz's C loops); `squeezed`
    holds the texts without their spaces."""
    bare = _squeezed(wanted)
    best = np.max(
        [
            process.cdist([wanted], plain, scorer=fuzz.ratio, dtype=np.float64)[0],
            process.cdist([wanted], plain, scorer=fuzz.token_sort_ratio, dtype=np.float64)[0],
            process.cdist([bare], squeezed, scorer=fuzz.ratio, dtype=np.float64)[0],
        ],
        axis=0,
    )
    # One slip changes the length by one at most: only texts about as long are compared.
    lengths = np.fromiter(map(len, squeezed), dtype=np.int64, count=len(squeezed))
    near = np.flatnonzero((abs(lengths - len(bare)) <= 1) & (np.minimum(lengths, len(bare)) >= 4))
    one_slip = np.zeros(len(squeezed), dtype=bool)
    if near.size:
        slips = process.cdist([bare], [squeezed[i] for i in near], scorer=OSA.distance)[0]
        one_slip[near] = slips <= 1
    return np.maximum(best / 100, np.where(one_slip, FUZZY_CUTOFF / 100, 0.0))


def similarity(wanted: str, text: str) -> float:
    """The best of whole-string, word-order-free and space-free similarity, in [0, 1].

    One slip (a letter dropped, added, changed, or two swapped) in a name of four letters or
    more is close enough to be a fuzzy match however short the name: "tmie" finds Time.
    """
    return float(_similarities(wanted, [text], [_squeezed(text)])[0])


def _ranked(wanted: str, table: _NameTable) -> list[tuple[MatchKind, str, float, float]]:
    """Partial and fuzzy matches together: near-exact spellings first, then partial matches
    (those where the query starts a word first), then the other close spellings; each with
    the score it is ordered by (its tier, then its similarity) and its similarity."""
    found = []
    similarities = _similarities(wanted, table.plain, table.squeezed)
    containing = table.containing(wanted)
    close = np.flatnonzero(similarities * 100 >= FUZZY_CUTOFF).tolist()
    for position in containing.union(close):
        name, text = table.names[position], table.plain[position]
        score = float(similarities[position])
        if position in containing:
            word_start = f" {wanted}" in f" {text}" or text in wanted
            tier = 0 if score >= NEAR_EXACT else 1 if word_start else 2
            found.append((tier, -score, name, "partial", score))
        else:  # close enough
            found.append((0 if score >= NEAR_EXACT else 3, -score, name, "fuzzy", score))
    found.sort()
    return [
        (kind, name, (TIERS - 1 - tier + score) / TIERS, score)
        for tier, _, name, kind, score in found
    ]


def exact_names(query: str, names: Sequence[str]) -> list[NameMatch]:
    """The names equal to the query once case, punctuation, word order and spaces are set
    aside, the one spelled as asked first (counts 0: the caller counts what its filter keeps)."""
    wanted = normalise(query)
    if not wanted:
        return []
    table = _table(tuple(names))
    same = {*table.by_form.get(_squeezed(wanted), []), *table.by_form.get(_word_set(wanted), [])}
    exact = sorted((table.plain[i] != wanted, table.names[i]) for i in same)
    return [
        NameMatch(name=name, match="exact", score=1.0, similarity=1.0, count=0) for _, name in exact
    ]


def close_names(query: str, names: Sequence[str]) -> list[NameMatch]:
    """Partial and fuzzy matches ranked together (counts 0, as in `exact_names`)."""
    wanted = normalise(query)
    if not wanted:
        return []
    return [
        NameMatch(name=name, match=kind, score=score, similarity=similarity, count=0)
        for kind, name, score, similarity in _ranked(wanted, _table(tuple(names)))
    ]


def match_names(query: str, candidates: Mapping[str, int]) -> list[NameMatch]:
    """Whole-name matches if there are any, else partial and fuzzy matches ranked together."""
    found = exact_names(query, list(candidates)) or close_names(query, list(candidates))
    return [match.model_copy(update={"count": candidates[match.name]}) for match in found]
