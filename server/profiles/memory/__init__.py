"""The memory profile: short memories stored and searched by tags, dates and type."""

from scoperag.server.profiles.declaration import DeleteTarget, Profile, Sample, SearchTool
from scoperag.server.results.shape import HitShape

PROFILE = Profile(
    name="memory",
    order=30,
    aliases=("memories",),
    instructions="Store memories and search them by tags, dates and type.",
    tools="scoperag.server.profiles.memory.tools",
    commands="scoperag.server.profiles.memory.commands",
    transfer="scoperag.server.profiles.memory.foreign_formats",
    methods={
        "search": "search",
        "store": "store_memory",
        "delete": "delete_memory",
        "ingest": "ingest_memories",
        "update": "update_memory",
        "history": "memory_history",
        "merge": "merge_memories",
        "find_duplicates": "find_duplicates",
    },
    retriever=SearchTool("search", "page_size"),
    hashes=("content_hash", "content"),
    states="scoperag.server.profiles.memory.expiry:states",
    hits={
        "search": HitShape("memories", "content", ("content_hash",)),
        "memory_history": HitShape("versions", "content", ("content_hash", "version")),
    },
    source="memory {content_hash:.12} · {memory_type} · tags {tags} · {created_at:.10}",
    sample=Sample("memories.json", "scoperag ingest memory {path}"),
    groups={"tags": "tags", "types": "memory_type"},
    deletes={
        "memory": DeleteTarget(
            "content_hash",
            "memory (content_hash)",
            by_prefix=True,
            deleter="scoperag.server.profiles.memory.versions:delete_version",
        ),
        "tag": DeleteTarget("tags", "memories tagged"),
    },
)
