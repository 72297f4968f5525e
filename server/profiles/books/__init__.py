"""The books profile: questions about a book answered without spoilers past the reader."""

from scoperag.server.profiles.declaration import DeleteTarget, Profile, Sample
from scoperag.server.results.shape import HitShape

PROFILE = Profile(
    name="books",
    order=20,
    aliases=("book",),
    instructions="Ask about a book without spoilers past the reader's saved position.",
    tools="scoperag.server.profiles.books.tools",
    commands="scoperag.server.profiles.books.commands",
    methods={
        "search": "search_book",
        "set_position": "set_reading_position",
        "position": "get_reading_position",
        "books": "list_books",
        "ingest": "ingest_book",
    },
    python_api="scoperag.server.profiles.books.python_api:BookProfile",
    state="scoperag.server.profiles.books.reading_state",
    hits={"search_book": HitShape("passages", "text", ("chapter", "pos_start", "pos_end"))},
    source="{book_id}, sentences {pos_start}-{pos_end} ({chapter_title})",
    sample=Sample("pride-and-prejudice-ch1-3.txt", "scoperag ingest books {path} --book-id pride"),
    groups={"books": "book_id"},
    deletes={"books": DeleteTarget("book_id", "book")},
)
