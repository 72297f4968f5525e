"""PDF documents as a reader sees them: the documents, then one document's pages in order
(each under its printed label), a page's chunks in order."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import groupby
from typing import Any

from scoperag.core.contracts.pdf import DOCUMENT_ID, PHYSICAL_PAGE_INDEX
from scoperag.server.profiles.declaration import Profile
from scoperag.server.ui.browse.common import match, page_number, point_text
from scoperag.server.ui.context import UiContext

TEMPLATE = "browse_pdf.html"
PAGES_SHOWN = 5  # PDF pages a browse page shows
MAX_CHUNKS = 2000  # chunks read for them at most


def page(
    ctx: UiContext, profile: Profile, collection: str, query: Mapping[str, str]
) -> dict[str, Any]:
    """The documents (qdrant-list-documents' answer) or, with `document`, a few of its pages."""
    from qdrant_client import models

    backend = ctx.runtime.backend
    documents = ctx.call(profile.methods["documents"], {})["documents"]
    document = query.get("document")
    if not document:
        return {"documents": documents, "document": None}
    chosen = next((d for d in documents if d["document_id"] == document), None)
    shown = page_number(query)
    first = (shown - 1) * PAGES_SHOWN
    span = models.FieldCondition(
        key=PHYSICAL_PAGE_INDEX.payload_key,
        range=models.Range(gte=first, lt=first + PAGES_SHOWN),
    )
    flt = match(backend, collection, {DOCUMENT_ID.payload_key: document})
    flt.must.append(span)
    payloads = [r.payload or {} for r in backend.scroll(collection, flt, MAX_CHUNKS)]
    payloads.sort(key=lambda p: (p.get("physical_page_index", 0), p.get("chunk_index", 0)))
    pages = [
        {"index": index, "label": chunks[0].get("page_label", ""), "chunks": chunks}
        for index, group in groupby(payloads, key=lambda p: p.get("physical_page_index"))
        for chunks in [[{**p, "text": point_text(p)} for p in group]]
    ]
    count = (
        chosen["page_count"]
        if chosen
        else (pages[0]["chunks"][0].get("page_count", 1) if pages else 1)
    )
    return {
        "documents": documents,
        "document": chosen or {"document_id": document, "title": document},
        "pages": pages,
        "page": shown,
        "total_pages": max(1, -(-count // PAGES_SHOWN)),
        "page_count": count,
    }
