"""The one hand-written table of the Python API: per profile, method name -> MCP tool name.

Everything else about a method (parameters, types, defaults, description, result model, errors)
is read from the tool itself when the store starts.
"""

from __future__ import annotations

from typing import NamedTuple

# profile -> Python method name -> the tool it calls
METHODS: dict[str, dict[str, str]] = {
    "pdf": {
        "find": "qdrant-find",
        "store": "qdrant-store",
        "documents": "qdrant-list-documents",
        "delete": "qdrant-delete-document",
        "ingest": "qdrant-ingest-pdf",
    },
    "books": {
        "search": "search_book",
        "set_position": "set_reading_position",
        "position": "get_reading_position",
        "books": "list_books",
        "ingest": "ingest_book",
    },
    "memory": {
        "search": "search",
        "store": "store_memory",
        "delete": "delete_memory",
        "ingest": "ingest_memories",
    },
    "dnd": {
        "search": "search_dnd_content",
        "spell": "lookup_spell",
        "creature": "lookup_creature",
        "equipment": "lookup_equipment",
        "character_option": "lookup_character_option",
        "rule": "lookup_rule",
        "documents": "list_documents",
        "ingest": "ingest_dnd",
    },
    "docs": {
        "search": "elf_docs_search_l0",
        "ingest": "ingest_docs",
    },
}


class SearchTool(NamedTuple):
    """The method a profile's LlamaIndex retriever searches with, and its top-k parameter."""

    method: str
    top_k: str


# profile -> what `retriever()` and `as_query_engine()` search with (books: the spoiler-safe
# retriever instead, whose filters are the book and the reader's position)
RETRIEVERS: dict[str, SearchTool] = {
    "pdf": SearchTool("find", "limit"),
    "memory": SearchTool("search", "page_size"),
    "dnd": SearchTool("search", "limit"),
    "docs": SearchTool("search", "top_k"),
}
