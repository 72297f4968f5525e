"""`match_names`: the best of whole-string, word-order-free and space-free similarity."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from scoperag.retrievers.name_match import (
    _NameTable,
    _similarities,
    match_names,
    normalise,
    similarity,
)

NAMES = {
    "Fireball": 2,
    "Delayed Blast Fireball": 1,
    "Feather Fall": 1,
    "Handaxe": 1,
    "Plate": 1,
    "Half Plate": 1,
    "Plate Armor of Etherealness": 1,
    "Adult Red Dragon": 1,
    "Magic Missile": 1,
    "Crossbow, light": 1,
    "Time": 1,
}


@pytest.mark.parametrize(
    ("query", "first", "match"),
    [
        ("fire ball", "Fireball", "exact"),
        ("featherfall", "Feather Fall", "exact"),
        ("hand axe", "Handaxe", "exact"),
        ("light crossbow", "Crossbow, light", "exact"),
        ("HALF-PLATE", "Half Plate", "exact"),
        ("plate armor", "Plate", "partial"),
        ("firebal", "Fireball", "partial"),
        ("fireboll", "Fireball", "fuzzy"),
        ("magic misile", "Magic Missile", "fuzzy"),
        ("tmie", "Time", "fuzzy"),
    ],
)
def test_the_best_name_comes_first(query: str, first: str, match: str) -> None:
    found = match_names(query, NAMES)
    assert (found[0].name, found[0].match) == (first, match)


def test_a_near_exact_spelling_beats_a_weak_partial_match() -> None:
    names = [found.name for found in match_names("plate armor", NAMES)]
    assert names.index("Plate") < names.index("Plate Armor of Etherealness")
    assert "Half Plate" not in names[:1]


def test_names_containing_the_query_come_before_close_spellings() -> None:
    found = match_names("dragon", {"Adult Red Dragon": 1, "Drakon": 1, "Dragon Turtle": 1})
    assert [(f.name, f.match) for f in found] == [
        ("Dragon Turtle", "partial"),
        ("Adult Red Dragon", "partial"),
        ("Drakon", "fuzzy"),
    ]


@pytest.mark.parametrize("query", ["dragon", "fire", "a", "plate armor", "drag"])
def test_matches_come_in_the_order_of_their_scores(query: str) -> None:
    """The tiers (near-exact, word-start partial, other partial, fuzzy) order the matches
    before similarity does; the score says so, the similarity stays beside it."""
    names = {name: 1 for name in ["Adult Red Dragon", "Drakon", "Dragon Turtle", "Fireball"]}
    names |= {name: 1 for name in ["Wildfire", "Plate", "Plate Armor of Etherealness", "Mage"]}
    found = match_names(query, names)
    assert found
    scores = [match.score for match in found]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)
    for match in found:
        assert match.similarity == pytest.approx(similarity(query, normalise(match.name)))


def test_exact_matches_stand_alone_and_counts_are_kept() -> None:
    found = match_names("Fireball", NAMES)
    assert [(f.name, f.count, f.score) for f in found] == [("Fireball", 2, 1.0)]


def test_similarity_takes_the_best_of_three_views() -> None:
    assert similarity("hand axe", "handaxe") == 1.0  # spaces removed
    assert similarity("light crossbow", "crossbow light") == 1.0  # word order free
    assert similarity("fireboll", "fireball") == pytest.approx(0.875)
    assert similarity("tmie", "time") == 0.8  # one slip in a short name: still a candidate
    assert match_names("   ", NAMES) == [] and match_names("zzzz", NAMES) == []


def _per_name(query: str, names: list[str]) -> set[str]:
    """The names the query is in, or that are whole words of it: the rule, name by name."""
    wanted = normalise(query)
    return {
        name
        for name in names
        if wanted in normalise(name) or f" {normalise(name)} " in f" {wanted} "
    }


@pytest.fixture(scope="module")
def open5e_names(shared_data: Path) -> list[str]:
    """Every distinct name of the shared Open5e fixtures."""
    names = sorted(
        {
            record["fields"]["name"]
            for path in (shared_data / "dnd").rglob("*.json")
            for record in json.loads(path.read_text(encoding="utf-8"))
            if isinstance(record, dict) and "name" in record.get("fields", {})
        }
    )
    assert len(names) > 1000
    return names


def test_containing_finds_what_a_comparison_per_name_finds(open5e_names: list[str]) -> None:
    """`containing` searches all names at once (issue 15); on every Open5e name and queries
    made of their words and pieces of words, it finds exactly what the rule finds per name.
    Pasted paragraphs too: runs of their words longer than any name are not looked up."""
    names = open5e_names
    rng = random.Random(15)
    words = sorted({word for name in names for word in normalise(name).split()})
    queries = [*rng.sample(names, 150), "plate armor", "dragon", "fire", "a", "of the"]
    queries += [" ".join(rng.sample(words, rng.randint(1, 4))) for _ in range(150)]
    queries += [word[: rng.randint(1, len(word))] for word in rng.sample(words, 150)]
    queries += [" ".join(rng.sample(names, 40) + rng.sample(words, 200)) for _ in range(20)]
    table = _NameTable.of(tuple(names))
    for query in queries:
        found = {names[position] for position in table.containing(normalise(query))}
        assert found == _per_name(query, names), query


def _slipped(name: str, rng: random.Random) -> str:
    """`name` with one slip: a letter dropped, added, changed, or two neighbours swapped."""
    at = rng.randrange(len(name) - 1)
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    return rng.choice(
        [
            name[:at] + name[at + 1 :],
            name[:at] + letter + name[at:],
            name[:at] + letter + name[at + 1 :],
            name[:at] + name[at + 1] + name[at] + name[at + 2 :],
        ]
    )


def _similarity_per_name(query: str, name: str) -> float:
    """The similarity rule for one name, written out with rapidfuzz's scalar functions."""
    wanted, text = normalise(query), normalise(name)
    bare, squeezed = wanted.replace(" ", ""), text.replace(" ", "")
    views = [
        fuzz.ratio(wanted, text),
        fuzz.token_sort_ratio(wanted, text),
        fuzz.ratio(bare, squeezed),
    ]
    one_slip = min(len(bare), len(squeezed)) >= 4 and OSA.distance(bare, squeezed) <= 1
    return max(max(views) / 100, 0.8 if one_slip else 0.0)


def test_similarities_of_all_names_at_once_follow_the_rule_per_name(
    open5e_names: list[str],
) -> None:
    """`_similarities` compares the query with every name at once and spells out one slip
    only for names about as long (issue 15); it gives each name the rule's score, for names
    with a slip, short pieces, words and pasted paragraphs."""
    names = open5e_names
    rng = random.Random(16)
    words = sorted({word for name in names for word in normalise(name).split()})
    short = [name for name in names if len(normalise(name).replace(" ", "")) <= 5]
    queries = [_slipped(name, rng) for name in rng.sample(names, 40) + short]
    queries += ["tmie", "fire", "a"]
    queries += [" ".join(rng.sample(words, rng.randint(1, 3))) for _ in range(20)]
    queries += [" ".join(rng.sample(words, 300)) for _ in range(3)]
    table = _NameTable.of(tuple(names))
    for query in queries:
        found = _similarities(normalise(query), table.plain, table.squeezed)
        expected = [_similarity_per_name(query, name) for name in names]
        assert found.tolist() == pytest.approx(expected), query
