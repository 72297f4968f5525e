"""pdf profile: the payload of a PDF page chunk and the filters of `qdrant-find`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from scoperag.core.config.settings import Settings
from scoperag.core.filters.fields import FieldType, FilterableField
from scoperag.core.filters.user_fields import configured_fields


class PdfPagePayload(BaseModel):
    """Metadata every chunk of a PDF page carries (flat in the Qdrant payload)."""

    document_id: str = Field(description="Exact, case-sensitive id; default the file stem.")
    physical_page_index: int = Field(ge=0, description="0-based position of the page in the file.")
    page_label: str = Field(description="The PDF's own label of the page: 'iv', '45', 'A-1'.")
    page_count: int = Field(ge=1)
    source: str = Field(description="File name.")
    title: str
    chunk_index: int = Field(ge=0, description="0-based position of the chunk within its page.")


DOCUMENT_ID = FilterableField(
    name="document_id",
    field_type=FieldType.KEYWORD,
    description=(
        "Only search this document (exact, case-sensitive id as listed by "
        "qdrant-list-documents). Leave out to search every document."
    ),
)
PHYSICAL_PAGE_INDEX = FilterableField(
    name="physical_page_index",
    field_type=FieldType.INTEGER,
    ge=0,
    description=(
        "Only search the page at this 0-based position in the file (the first page is 0), "
        "whatever its printed label."
    ),
)
PAGE_LABEL = FilterableField(
    name="page_label",
    field_type=FieldType.KEYWORD,
    description=(
        "Only search pages with this page label, the PDF's own page name such as 'iv', '45' or "
        "'A-1' (exact match; a label can occur more than once in a document, and can be empty)."
    ),
    allow_empty=True,
)
PDF_FIELDS = [DOCUMENT_ID, PHYSICAL_PAGE_INDEX, PAGE_LABEL]
CHUNK_INDEX = FilterableField(
    name="chunk_index",
    field_type=FieldType.INTEGER,
    description="Chunk position within its page.",
)
PDF_INDEXES = [*PDF_FIELDS, CHUNK_INDEX]


# qdrant-find's own parameters, beside its filters
FIND_PARAMETERS = ("query", "limit")


def user_fields(settings: Settings) -> list[FilterableField]:
    """The filters a user declared for qdrant-find; none may reuse a built-in name or key."""
    reserved = {*FIND_PARAMETERS, *(field.name for field in PDF_INDEXES)}
    return configured_fields(settings, reserved)


def pdf_indexes(settings: Settings) -> list[FilterableField]:
    """Every indexed field of the pdf collection: the built-in ones and the user's."""
    return [*PDF_INDEXES, *user_fields(settings)]


def required_indexes(settings: Settings) -> dict[str, list[FilterableField]]:
    """The pdf profile's collection and its indexed fields."""
    return {settings.pdf_collection: pdf_indexes(settings)}
