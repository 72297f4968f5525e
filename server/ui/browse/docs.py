"""Docs by scope and status: the scopes and their statuses counted, then one scope and
status's documents by title, each with its chunks in order."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import groupby
from typing import Any

from scoperag.core.contracts.docs import SCOPE, STATUS
from scoperag.server.profiles.declaration import Profile
from scoperag.server.ui.browse.common import match, page_number, point_text
from scoperag.server.ui.context import UiContext

TEMPLATE = "browse_docs.html"
PAGE_SIZE = 20  # documents a page
MAX_CHUNKS = 5000  # chunks of one scope and status read at most


def page(
    ctx: UiContext, profile: Profile, collection: str, query: Mapping[str, str]
) -> dict[str, Any]:
    """Scopes with their statuses counted or, with `scope` and `status`, their documents."""
    backend = ctx.runtime.backend
    scopes = []
    for scope, _ in sorted(backend.facet(collection, SCOPE.payload_key, None, 100).items()):
        within = match(backend, collection, {SCOPE.payload_key: scope})
        statuses = sorted(backend.facet(collection, STATUS.payload_key, within, 100).items())
        scopes.append({"scope": scope, "statuses": statuses})
    scope, status = query.get("scope"), query.get("status")
    if not scope or not status:
        return {"scopes": scopes, "scope": None}
    flt = match(backend, collection, {SCOPE.payload_key: scope, STATUS.payload_key: status})
    chunks = [r.payload or {} for r in backend.scroll(collection, flt, MAX_CHUNKS)]
    chunks.sort(key=lambda p: (p.get("title", ""), p.get("doc_id", ""), p.get("chunk_index", 0)))
    documents = [
        {**parts[0], "chunks": [point_text(p) for p in parts]}
        for _, group in groupby(chunks, key=lambda p: p.get("doc_id"))
        for parts in [list(group)]
    ]
    shown = page_number(query)
    return {
        "scopes": scopes,
        "scope": scope,
        "status": status,
        "documents": documents[(shown - 1) * PAGE_SIZE : shown * PAGE_SIZE],
        "total": len(documents),
        "page": shown,
        "total_pages": max(1, -(-len(documents) // PAGE_SIZE)),
    }
