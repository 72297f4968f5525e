"""The dnd profile: D&D 5e content (Open5e) looked up and searched by source document."""

from scoperag.server.profiles.declaration import DeleteTarget, Profile, Sample, SearchTool
from scoperag.server.results.shape import HitShape

# the kinds a `lookup_<kind>` tool returns
LOOKUP_KINDS = ("spell", "creature", "equipment", "character_option", "rule")

PROFILE = Profile(
    name="dnd",
    order=40,
    instructions="Look up D&D 5e content (spells, monsters, items, rules) by source document.",
    tools="scoperag.server.profiles.dnd.tools",
    commands="scoperag.server.profiles.dnd.commands",
    methods={
        "search": "search_dnd_content",
        "spell": "lookup_spell",
        "creature": "lookup_creature",
        "equipment": "lookup_equipment",
        "character_option": "lookup_character_option",
        "rule": "lookup_rule",
        "documents": "list_documents",
        "ingest": "ingest_dnd",
    },
    retriever=SearchTool("search", "limit"),
    hits={
        tool: HitShape("results", "text", ("name", "document"))
        for tool in ("search_dnd_content", *(f"lookup_{kind}" for kind in LOOKUP_KINDS))
    },
    source="{document} · {kind} {name}",
    sample=Sample("dnd", "scoperag ingest dnd {path}"),
    groups={"documents": "document"},
    deletes={"dnd": DeleteTarget("document", "D&D document")},
)
