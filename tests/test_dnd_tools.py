"""The dnd tools over MCP on all of ../shared/data/dnd (wotc-srd, a5e, tob), ingested once.

Expected figures are counted from the Open5e files themselves, not from the pipeline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.dnd.models import KIND_FIELDS
from scoperag.server.runtime import Runtime

SLUGS = ["a5e", "tob", "wotc-srd"]
KIND_OF_MODEL = {
    "api.spell": "spell",
    "api.monster": "creature",
    "api.weapon": "equipment",
    "api.armor": "equipment",
    "api.magicitem": "equipment",
    "api.charclass": "character-option",
    "api.archetype": "character-option",
    "api.race": "character-option",
    "api.subrace": "character-option",
    "api.background": "character-option",
    "api.feat": "character-option",
    "api.section": "rule",
    "api.condition": "rule",
    "api.plane": "rule",
}
# tool -> arguments that give results in more than one document
TOOL_CALLS: dict[str, dict[str, Any]] = {
    "search_dnd_content": {"query": "fire damage", "limit": 30},
    "lookup_spell": {"level": 1, "limit": 100},
    "lookup_creature": {"type": "dragon", "limit": 100},
    "lookup_equipment": {"item_type": "magic-item", "limit": 100},
    "lookup_character_option": {"option_type": "background", "limit": 100},
    "lookup_rule": {"limit": 100},
}
# lookup -> which records its TOOL_CALLS arguments select
SELECTS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "lookup_spell": lambda r: r["model"] == "api.spell" and r["fields"]["spell_level"] == 1,
    "lookup_creature": lambda r: r["model"] == "api.monster" and r["fields"]["type"] == "Dragon",
    "lookup_equipment": lambda r: r["model"] == "api.magicitem",
    "lookup_character_option": lambda r: r["model"] == "api.background",
    "lookup_rule": lambda r: KIND_OF_MODEL[r["model"]] == "rule",
}


@pytest.fixture(scope="session")
def records(dnd_dir: Path) -> list[dict[str, Any]]:
    """Every content record of the data, with its document slug added as `slug_of_document`."""
    found = []
    for slug in SLUGS:
        folder = dnd_dir / slug
        pk = json.loads((folder / "Document.json").read_text())[0]["pk"]
        for path in folder.glob("*.json"):
            for record in json.loads(path.read_text()):
                if record["model"] in KIND_OF_MODEL:
                    assert record["fields"]["document"] == pk
                    found.append({**record, "slug_of_document": slug})
    return found


@pytest.fixture(scope="session")
async def client(dnd_ingest: tuple[Runtime, Any]) -> Any:
    async with Client(build_server(dnd_ingest[0])) as mcp_client:
        yield mcp_client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured result; checks that every result carries a document slug."""
    result = (await client.call_tool(tool, arguments)).structured_content
    for hit in result.get("results", []):
        assert hit["document"] in SLUGS, hit
    return result


def documents_of(result: dict[str, Any]) -> set[str]:
    return {hit["document"] for hit in result["results"]}


def test_ingest_reports_every_file(dnd_ingest: tuple[Runtime, Any], records: list) -> None:
    report = dnd_ingest[1]
    assert report.items == len(records)
    assert report.skipped == 2  # MonsterSpell.json and SpellList.json: other kinds
    notes = {Path(f["path"]).name: f.get("notes", []) for f in report.files if not f["items"]}
    assert set(notes) == {"MonsterSpell.json", "SpellList.json"}
    assert all("not a kind this profile ingests" in note[0] for note in notes.values())
    assert not [f for f in report.files if f.get("error")]


async def test_list_documents_counts_per_kind(client: Client, records: list, dnd_dir: Path) -> None:
    result = await call(client, "list_documents")
    listed = {doc["document"]: doc for doc in result["documents"]}
    assert sorted(listed) == SLUGS
    for slug in SLUGS:
        expected = Counter(
            KIND_OF_MODEL[r["model"]] for r in records if r["slug_of_document"] == slug
        )
        title = json.loads((dnd_dir / slug / "Document.json").read_text())[0]["fields"]["title"]
        assert listed[slug]["counts"] == dict(expected)
        assert listed[slug]["total"] == sum(expected.values())
        assert listed[slug]["title"] == title


async def test_same_name_in_two_documents_comes_back_once_per_document(
    client: Client, dnd_ingest: tuple[Runtime, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: a name in two documents showed the alphabetically first one's
    copy first; the documents' priority setting decides (the SRD first by default)."""
    both = await call(client, "lookup_spell", name="Fireball")
    assert [(hit["name"], hit["document"]) for hit in both["results"]] == [
        ("Fireball", "wotc-srd"),
        ("Fireball", "a5e"),
    ]
    settings = dnd_ingest[0].settings
    monkeypatch.setattr(settings, "dnd_document_priority", ["a5e", "wotc-srd"])
    swapped = await call(client, "lookup_spell", name="Fireball")
    assert [hit["document"] for hit in swapped["results"]] == ["a5e", "wotc-srd"]
    assert {hit["match"] for hit in both["results"]} == {"exact"}
    only = await call(client, "lookup_spell", name="fireball", documents=["wotc-srd"])
    assert [(hit["name"], hit["document"]) for hit in only["results"]] == [("Fireball", "wotc-srd")]


@pytest.mark.parametrize(
    ("query", "match"),
    [("FIREBALL", "exact"), ("firebal", "partial"), ("fierball", "fuzzy")],
)
async def test_name_matching_is_case_insensitive_partial_then_fuzzy(
    client: Client, query: str, match: str
) -> None:
    result = await call(client, "lookup_spell", name=query, limit=2)
    assert [hit["name"] for hit in result["results"]] == ["Fireball", "Fireball"]
    assert {hit["match"] for hit in result["results"]} == {match}


@pytest.mark.parametrize(
    ("tool", "query", "name"),
    [
        ("lookup_spell", "fire ball", "Fireball"),
        ("lookup_spell", "featherfall", "Feather Fall"),
        ("lookup_equipment", "hand axe", "Handaxe"),
        ("lookup_equipment", "plate armor", "Plate"),
    ],
)
async def test_names_match_without_spaces_or_word_order_and_near_exact_first(
    client: Client, tool: str, query: str, name: str
) -> None:
    """Regression: "fire ball", "featherfall", "hand axe" found nothing, and
    "Plate Armor of Etherealness" ranked above "Plate" for "plate armor"."""
    result = await call(client, tool, name=query, limit=3)
    assert result["results"][0]["name"] == name


async def test_partial_name_finds_every_name_containing_it(client: Client, records: list) -> None:
    result = await call(client, "lookup_creature", name="dragon", limit=100)
    names = [hit["name"] for hit in result["results"]]
    expected = [r for r in records if r["model"] == "api.monster"]
    expected = [r for r in expected if "dragon" in r["fields"]["name"].lower()]
    assert "Adult Red Dragon" in names
    assert all("dragon" in name.lower() for name in names[: len(expected)])
    assert {hit["match"] for hit in result["results"][len(expected) :]} <= {"fuzzy"}
    assert result["total"] == len(names) >= len(expected)  # close spellings follow: "Drakon"


async def test_level_and_school_filters(client: Client, records: list) -> None:
    spells = [r for r in records if r["model"] == "api.spell"]
    result = await call(client, "lookup_spell", level=3, school="EVOCATION", limit=100)
    expected = [
        r
        for r in spells
        if r["fields"]["spell_level"] == 3 and r["fields"]["school"] == "Evocation"
    ]
    assert result["total"] == len(expected) == len(result["results"])
    assert {(hit["level"], hit["school"]) for hit in result["results"]} == {(3, "evocation")}
    assert documents_of(result) == {"a5e", "wotc-srd"}
    cantrips = await call(client, "lookup_spell", level=0, documents=["a5e"], limit=100)
    assert cantrips["total"] == sum(
        1 for r in spells if r["fields"]["spell_level"] == 0 and r["slug_of_document"] == "a5e"
    )
    assert {(hit["level"], hit["document"]) for hit in cantrips["results"]} == {(0, "a5e")}


@pytest.mark.parametrize("rating", [0.125, "1/8"])
async def test_challenge_rating_filter(client: Client, records: list, rating: Any) -> None:
    result = await call(client, "lookup_creature", challenge_rating=rating, limit=100)
    expected = [
        r
        for r in records
        if r["model"] == "api.monster"
        and Fraction(r["fields"]["challenge_rating"]) == Fraction(1, 8)
    ]
    assert result["total"] == len(expected) == len(result["results"])
    assert {hit["challenge_rating"] for hit in result["results"]} == {0.125}


async def test_creature_filters_combine_by_and(client: Client, records: list) -> None:
    result = await call(
        client, "lookup_creature", type="Dragon", challenge_rating=17, documents=["tob"]
    )
    expected = [
        r["fields"]["name"]
        for r in records
        if r["model"] == "api.monster"
        and r["slug_of_document"] == "tob"
        and r["fields"]["type"] == "Dragon"
        and r["fields"]["challenge_rating"] == "17"
    ]
    assert expected
    assert sorted(hit["name"] for hit in result["results"]) == sorted(expected)


async def test_hits_carry_the_fields_of_their_kind_only(client: Client) -> None:
    """A typed field that does not apply to a hit's kind is left out, not sent as null
    (a page of 20 spells validated 4x slower in MCP's Python client); the fields every hit can
    have stay, and the schema still lists every field, optional."""
    spells = (await call(client, "lookup_spell", level=3))["results"]
    creatures = (await call(client, "lookup_creature", type="Dragon"))["results"]
    assert spells and creatures
    assert all({"level", "school"} <= set(hit) for hit in spells)
    assert not any({"challenge_rating", "type", "size"} & set(hit) for hit in spells)
    assert all({"challenge_rating", "type"} <= set(hit) for hit in creatures)
    assert not any({"level", "school"} & set(hit) for hit in creatures)
    kind_nulls = [
        key for hit in spells + creatures for key in KIND_FIELDS & set(hit) if hit[key] is None
    ]
    assert kind_nulls == []
    assert all({"score", "match"} <= set(hit) for hit in spells + creatures)  # always there
    tools = {tool.name: tool for tool in await client.list_tools()}
    schema = tools["lookup_spell"].output_schema
    ref = schema["properties"]["results"]["items"]["$ref"]
    hit_schema = schema["$defs"][ref.removeprefix("#/$defs/")]
    assert {"level", "school", "classes", "score"} <= set(hit_schema["properties"])
    assert not {"challenge_rating", "type", "size"} & set(hit_schema["properties"])
    assert set(hit_schema["required"]) == {
        "document",
        "document_title",
        "kind",
        "name",
        "slug",
        "text",
    }


async def test_listing_without_name_is_alphabetical(client: Client) -> None:
    result = await call(client, "lookup_rule", rule_type="condition", limit=100)
    names = [hit["name"] for hit in result["results"]]
    assert len(names) == result["total"] > 10
    assert names == sorted(names, key=str.lower)
    assert result["message"] is None
    first = await call(client, "lookup_rule", rule_type="condition", limit=3)
    assert [hit["name"] for hit in first["results"]] == names[:3]
    assert "Showing 3 of" in first["message"]


@pytest.mark.parametrize("tool", list(TOOL_CALLS))
async def test_documents_left_out_means_every_document(client: Client, tool: str) -> None:
    result = await call(client, tool, **TOOL_CALLS[tool])
    assert len(documents_of(result)) >= (1 if tool == "lookup_rule" else 2)


@pytest.mark.parametrize("tool", list(TOOL_CALLS))
async def test_documents_empty_list_matches_nothing(client: Client, tool: str) -> None:
    result = await call(client, tool, **TOOL_CALLS[tool], documents=[])
    assert result["results"] == []
    assert "'documents' is an empty list" in result["message"]


@pytest.mark.parametrize("tool", list(TOOL_CALLS))
async def test_unknown_slug_names_the_known_slugs(client: Client, tool: str) -> None:
    result = await call(client, tool, **TOOL_CALLS[tool], documents=["wotc-srd", "phb"])
    assert result["results"] == []
    assert 'Unknown document slug(s) ["phb"]' in result["message"]
    assert all(slug in result["message"] for slug in SLUGS)


@pytest.mark.parametrize("tool", list(TOOL_CALLS))
@pytest.mark.parametrize("slugs", [["a5e"], ["wotc-srd", "tob"], ["a5e", "wotc-srd"]])
async def test_documents_narrow_every_tool(
    client: Client, records: list, tool: str, slugs: list[str]
) -> None:
    result = await call(client, tool, **TOOL_CALLS[tool], documents=slugs)
    assert documents_of(result) <= set(slugs)
    if tool in SELECTS:  # a lookup is exact: its total is the count of those records
        selected = [r for r in records if SELECTS[tool](r) and r["slug_of_document"] in slugs]
        assert result["total"] == len(selected)
        assert len(result["results"]) == min(len(selected), TOOL_CALLS[tool]["limit"])


async def test_search_merges_name_and_meaning_without_duplicates(client: Client) -> None:
    result = await call(client, "search_dnd_content", query="Fireball", limit=10)
    keys = [(hit["document"], hit["kind"], hit["slug"]) for hit in result["results"]]
    assert len(keys) == len(set(keys)) == 10
    assert {(hit["name"], hit["document"]) for hit in result["results"][:2]} == {
        ("Fireball", "a5e"),
        ("Fireball", "wotc-srd"),
    }
    meaning = await call(
        client, "search_dnd_content", query="a creature that cannot see", documents=["wotc-srd"]
    )
    assert "Blinded" in [hit["name"] for hit in meaning["results"][:5]]


@pytest.mark.parametrize(
    ("query", "documents", "limit"),
    [
        ("Fireball", None, 10),
        ("fire damage in a cone", None, 30),
        ("dragon", ["a5e", "tob"], 8),
        ("firebal", ["wotc-srd"], 5),
        ("a creature that cannot see", ["wotc-srd"], 10),
    ],
)
async def test_search_ranks_as_llamaindex_fusion_does(
    client: Client, dnd_ingest: tuple[Runtime, Any], query: str, documents: Any, limit: int
) -> None:
    """The tool fuses points itself; LlamaIndex's `QueryFusionRetriever` over the
    same two retrievers (as the notebook composes them) gives the same hits and scores."""
    from llama_index.core.llms.mock import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.retrievers.fusion_retriever import FUSION_MODES

    from scoperag.core.contracts.dnd import COLLECTION, DOCUMENTS
    from scoperag.core.filters.fields import build_filter
    from scoperag.retrievers.hybrid import HybridRetriever
    from scoperag.retrievers.name_retriever import NameMatchRetriever

    runtime = dnd_ingest[0]
    flt = build_filter([DOCUMENTS], {"documents": documents})
    priority = tuple(runtime.settings.dnd_document_priority)
    names = NameMatchRetriever(
        runtime.backend, COLLECTION, flt, limit, tie_key="document", tie_priority=priority
    )
    fusion = QueryFusionRetriever(
        [HybridRetriever(runtime.backend, runtime.embedder, COLLECTION, flt, limit), names],
        llm=MockLLM(),
        mode=FUSION_MODES.RECIPROCAL_RANK,
        similarity_top_k=limit,
        num_queries=1,
        use_async=False,
    )
    expected = [
        (hit.node.metadata["document"], hit.node.metadata["slug"], pytest.approx(hit.score))
        for hit in fusion.retrieve(query)
    ]
    arguments = {"query": query, "limit": limit} | ({"documents": documents} if documents else {})
    result = await call(client, "search_dnd_content", **arguments)
    got = [(hit["document"], hit["slug"], hit["score"]) for hit in result["results"]]
    assert len(got) == min(limit, len(expected)) > 0
    assert got == expected


async def test_unknown_school_says_which_are_known(client: Client) -> None:
    result = await call(client, "lookup_spell", school="evocaton")
    assert result["results"] == []
    assert '"evocaton"' in result["message"] and "evocation" in result["message"]


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("lookup_spell", {"level": "third"}, "level"),
        ("lookup_equipment", {"item_type": "shield"}, "item_type"),
        ("lookup_creature", {"challenge_rating": "hard"}, "challenge_rating"),
        ("lookup_spell", {"documents": 5}, "documents"),
        ("search_dnd_content", {"query": ""}, "query"),
    ],
)
async def test_bad_parameters_are_named_with_their_value(
    client: Client, tool: str, arguments: dict[str, Any], named: str
) -> None:
    with pytest.raises(ToolError) as error:
        await client.call_tool(tool, arguments)
    assert f"'{named}'" in str(error.value)


async def test_tool_names_and_parameters(client: Client) -> None:
    tools = {tool.name: set(tool.inputSchema["properties"]) for tool in await client.list_tools()}
    assert tools == {
        "ingest_dnd": {"paths"},
        "search_dnd_content": {"query", "documents", "limit", "explain"},
        "lookup_spell": {"name", "level", "school", "documents", "limit", "explain"},
        "lookup_creature": {"name", "type", "challenge_rating", "documents", "limit", "explain"},
        "lookup_equipment": {"item_type", "name", "documents", "limit", "explain"},
        "lookup_character_option": {"option_type", "name", "documents", "limit", "explain"},
        "lookup_rule": {"rule_type", "name", "documents", "limit", "explain"},
        "list_documents": set(),
    }


async def test_empty_store_says_how_to_ingest(make_runtime: Callable[..., Runtime]) -> None:
    async with Client(build_server(make_runtime(profiles=["dnd"]))) as empty:
        for tool, arguments in [("lookup_spell", {"name": "Fireball"}), ("list_documents", {})]:
            result = (await empty.call_tool(tool, arguments)).structured_content
            assert "scoperag ingest dnd" in result["message"]


def test_listing_the_tools_loads_neither_llamaindex_nor_qdrant_client() -> None:
    """Regression: the server lists its tools at start-up before any handler is needed."""
    probe = (
        "import sys; from scoperag.server.profiles.dnd.tools import build; "
        "from scoperag.server.runtime import Runtime; "
        "build(Runtime()); print(sorted(m for m in ('llama_index.core', 'qdrant_client', "
        "'torch') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
