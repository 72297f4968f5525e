"""PDF documents as a reader sees them: the documents (counted by the engine's facet), then
one document's pages in order (each under its printed label), a page's chunks in order."""

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
DOCUMENTS_SHOWN = 25  # documents a page lists
MAX_DOCUMENTS = 100_000  # documents counted at most


def _document(ctx: UiContext, collection: str, document: str) -> dict[str, Any]:
    """A document's id, title and page count, read from one of its points."""
    backend = ctx.runtime.backend
    flt = match(backend, collection, {DOCUMENT_ID.payload_key: document})
    found = backend.scroll(collection, flt, 1)
    payload = found[0].payload or {} if found else {}
    return {
        "document_id": document,
        "title": payload.get("title") or document,
        "page_count": payload.get("page_count", 0),
    }


def page(
    ctx: UiContext, profile: Profile, collection: str, query: Mapping[str, str]
) -> dict[str, Any]:
    """The documents, a page of them at a time, or with `document` a few of its pages."""
    from qdrant_client import models

    backend = ctx.runtime.backend
    document = query.get("document")
    shown = page_number(query)
    if not document:
        counts = backend.facet(collection, DOCUMENT_ID.payload_key, None, MAX_DOCUMENTS)
        names = sorted(counts)
        listed = names[(shown - 1) * DOCUMENTS_SHOWN : shown * DOCUMENTS_SHOWN]
        return {
            "documents": [
                {**_document(ctx, collection, name), "chunks": counts[name]} for name in listed
            ],
            "total": len(names),
            "document": None,
            "page": shown,
            "total_pages": max(1, -(-len(names) // DOCUMENTS_SHOWN)),
        }
    chosen = _document(ctx, collection, document)
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
    count = max(1, chosen["page_count"])
    return {
        "document": chosen,
        "pages": pages,
        "page": shown,
        "total_pages": -(-count // PAGES_SHOWN),
        "page_count": count,
    }
