"""books profile: the payload of a sentence-window chunk and the filters that keep spoilers out."""

from __future__ import annotations

from pydantic import BaseModel, Field

from scoperag.core.config.settings import Settings
from scoperag.core.filters.fields import Condition, FieldType, FilterableField

COLLECTION = "books"
DEFAULT_READER = "default"


class BookChunkPayload(BaseModel):
    """Metadata every chunk of a book carries (flat in the Qdrant payload)."""

    book_id: str = Field(description="Exact, case-sensitive id given at ingestion.")
    title: str
    chapter: int = Field(ge=0, description="Chapter number; 0 is the text before chapter 1.")
    chapter_title: str
    pos_start: int = Field(ge=0, description="Sentence id (sid) of the chunk's first sentence.")
    pos_end: int = Field(ge=0, description="Sentence id (sid) of the chunk's last sentence.")
    sentences: list[str] = Field(
        min_length=1, description="The chunk's sentences; sentence k has sid pos_start + k."
    )


PAYLOAD_MODEL = BookChunkPayload  # what every stored point's payload fits (imports, check)


class BookSummary(BaseModel):
    """What `list_books` reports of one ingested book."""

    book_id: str
    title: str
    sentences: int = Field(description="Sentences in the book (sids 0 to sentences - 1).")
    chapters: int = Field(description="Numbered chapters (text before chapter 1 not counted).")
    chunks: int


BOOK_ID = FilterableField(
    name="book_id",
    field_type=FieldType.KEYWORD,
    required=True,
    description="The book's id as given at ingestion (exact, case-sensitive; see list_books).",
)
READ_UP_TO = FilterableField(
    name="user_pos",
    key="pos_start",
    field_type=FieldType.INTEGER,
    condition=Condition.LTE,
    description="Only chunks that start at or before this sentence id (the reader's position).",
)
REACHES = FilterableField(
    name="reaches",
    key="pos_end",
    field_type=FieldType.INTEGER,
    condition=Condition.GTE,
    description="Only chunks that end at or after this sentence id.",
)
CHAPTER = FilterableField(
    name="chapter",
    field_type=FieldType.INTEGER,
    ge=0,
    description="Only chunks of this chapter.",
)
BOOK_INDEXES = [BOOK_ID, READ_UP_TO, REACHES, CHAPTER]


def required_indexes(settings: Settings) -> dict[str, list[FilterableField]]:
    """The books profile's collection and its indexed fields."""
    return {COLLECTION: BOOK_INDEXES}
