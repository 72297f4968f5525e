"""The pdf profile: PDF pages searched by document and page label or index."""

from scoperag.server.profiles.declaration import DeleteTarget, Profile, Sample, SearchTool
from scoperag.server.results.shape import HitShape

PROFILE = Profile(
    name="pdf",
    order=10,
    instructions="Search PDF pages by document and page label or index (qdrant-find).",
    tools="scoperag.server.profiles.pdf.tools",
    commands="scoperag.server.profiles.pdf.commands",
    methods={
        "find": "qdrant-find",
        "store": "qdrant-store",
        "documents": "qdrant-list-documents",
        "delete": "qdrant-delete-document",
        "ingest": "qdrant-ingest-pdf",
    },
    retriever=SearchTool("find", "limit"),
    hits={"qdrant-find": HitShape("hits", "text", ("document_id", "page_label"))},
    source="{document_id}, page {page_label} (index {physical_page_index})",
    sample=Sample("", "scoperag ingest pdf {path}"),
    groups={"documents": "document_id"},
    deletes={"pdf": DeleteTarget("document_id", "PDF document")},
)
