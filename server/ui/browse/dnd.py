"""D&D content by document and kind: the documents with their kinds counted, then one kind's
entries of one document in alphabetical order, a page at a time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scoperag.server.profiles.declaration import Profile
from scoperag.server.ui.browse.common import match, ordered, page_number, point_text
from scoperag.server.ui.context import UiContext

TEMPLATE = "browse_dnd.html"
PAGE_SIZE = 25
ORDER_KEY = "name_order"  # alphabetical order of the name (`core.contracts.dnd.name_order`)
DETAILS = (
    "level",
    "school",
    "type",
    "challenge_rating",
    "size",
    "item_type",
    "option_type",
    "rule_type",
)


def page(
    ctx: UiContext, profile: Profile, collection: str, query: Mapping[str, str]
) -> dict[str, Any]:
    """The documents (list_documents' answer) or, with `document` and `kind`, its entries."""
    backend = ctx.runtime.backend
    documents = ctx.call(profile.methods["documents"], {})["documents"]
    document, kind = query.get("document"), query.get("kind")
    if not document or not kind:
        return {"documents": documents, "document": None}
    flt = match(backend, collection, {"document": document, "kind": kind})
    total = backend.count(collection, flt)
    shown = page_number(query)
    entries = [
        {
            "name": p.get("name", ""),
            "details": [(key, p[key]) for key in DETAILS if p.get(key) not in (None, "", [])],
            "classes": p.get("classes") or [],
            "text": point_text(p),
        }
        for p in ordered(ctx, collection, flt, ORDER_KEY, PAGE_SIZE, (shown - 1) * PAGE_SIZE)
    ]
    chosen = next((d for d in documents if d["document"] == document), None)
    return {
        "documents": documents,
        "document": chosen or {"document": document, "title": document},
        "kind": kind,
        "entries": entries,
        "total": total,
        "page": shown,
        "total_pages": max(1, -(-total // PAGE_SIZE)),
    }
