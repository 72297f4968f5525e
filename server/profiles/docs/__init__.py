"""The docs profile: shared documents searched by scope, status, type, agent and update time."""

from scoperag.server.profiles.declaration import DeleteTarget, Profile, Sample, SearchTool
from scoperag.server.results.shape import HitShape

PROFILE = Profile(
    name="docs",
    order=50,
    instructions="Search shared documents by scope, status, type, agent and update time.",
    tools="scoperag.server.profiles.docs.tools",
    commands="scoperag.server.profiles.docs.commands",
    http="scoperag.server.profiles.docs.http_routes",
    methods={
        "search": "elf_docs_search_l0",
        "ingest": "ingest_docs",
    },
    retriever=SearchTool("search", "top_k"),
    hits={"elf_docs_search_l0": HitShape("hits", "text", ("doc_id", "chunk_index"))},
    source="{doc_id} (chunk {chunk_index}) · {title}",
    sample=Sample("docs.jsonl", "scoperag ingest docs {path}"),
    groups={"documents": "doc_id"},
    unindexed=frozenset({"doc_id"}),  # counted per value from each document's first chunk
    deletes={"docs": DeleteTarget("doc_id", "docs document")},
)
