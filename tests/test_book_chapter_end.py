"""A position set by chapter lands on the chapter's last real sentence, on every engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client import models

from scoperag.core.contracts.books import BOOK_INDEXES, COLLECTION
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.client.backend import QdrantClientBackend
from scoperag.core.engine.collections import ensure_indexes
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.retrievers.book_lookup import BookLookup

CHAPTERS = {  # chapter -> its sentences, in reading order
    1: ["It begins.", "Someone speaks.", "* * *"],
    2: ["Another day.", "The chapter ends here.", "***", "—"],
    3: ["No separator closes this one."],
}


@pytest.fixture(params=["local", "edge"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorBackend]:
    opened = (
        QdrantClientBackend.local(tmp_path / "qdrant")
        if request.param == "local"
        else EdgeBackend.open(tmp_path / "edge")
    )
    opened.create_collection(COLLECTION, 2, {})
    ensure_indexes(opened, COLLECTION, BOOK_INDEXES)
    points, sid = [], 0
    for chapter, sentences in CHAPTERS.items():  # one chunk per chapter
        payload = {
            "book_id": "tiny",
            "title": "Tiny",
            "chapter": chapter,
            "chapter_title": f"Chapter {chapter}",
            "pos_start": sid,
            "pos_end": sid + len(sentences) - 1,
            "sentences": sentences,
        }
        points.append(
            models.PointStruct(id=chapter, vector={DENSE_VECTOR: [1.0, 0.0]}, payload=payload)
        )
        sid += len(sentences)
    opened.upsert_points(COLLECTION, points)
    yield opened
    opened.close()


def test_a_finished_chapter_ends_on_its_last_words_not_a_separator(backend) -> None:
    """Regression: chapter= landed on a closing `* * *` line, not the last sentence."""
    lookup = BookLookup(backend)
    assert lookup.chapter_end("tiny", 1) == 1  # "Someone speaks.", not "* * *" (sid 2)
    assert lookup.chapter_end("tiny", 2) == 4  # "The chapter ends here." before "***" and "—"
    assert lookup.chapter_end("tiny", 3) == 7  # no separator: the last sentence itself
    assert lookup.chapter_end("tiny", 4) is None
