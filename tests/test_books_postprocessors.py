"""SpoilerTruncation and SentenceDedup on real chunks of Pride and Prejudice (no store needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from scoperag.pipelines.book import Book, SentenceWindows, chapter_documents, read_book
from scoperag.postprocessors.sentence_dedup import SentenceDedup
from scoperag.postprocessors.spoiler_truncation import SpoilerTruncation


@pytest.fixture(scope="module")
def book(shared_data: Path) -> Book:
    return read_book(shared_data / "books" / "pg1342-pride-and-prejudice.txt", "pride", None, 2)


@pytest.fixture(scope="module")
def chunks(book: Book) -> dict[int, TextNode]:
    """pos_start -> chunk, windows of 6 sentences sharing 2."""
    nodes = SentenceWindows(window=6, overlap=2)(chapter_documents(book))
    return {node.metadata["pos_start"]: node for node in nodes}


def scored(chunks: dict[int, TextNode], *starts_and_scores: tuple[int, float]) -> list:
    return [NodeWithScore(node=chunks[start], score=score) for start, score in starts_and_scores]


def expected_text(book: Book, first: int, last: int) -> str:
    return " ".join(s.text for s in book.sentences[first : last + 1])


def test_a_chunk_straddling_the_position_is_cut_exactly_there(
    book: Book, chunks: dict[int, TextNode]
) -> None:
    start = 10  # a chunk of sids 10..15
    assert chunks[start].metadata["pos_end"] == 15
    for user_pos in range(10, 16):
        [kept] = SpoilerTruncation(user_pos=user_pos).postprocess_nodes(
            scored(chunks, (start, 0.5))
        )
        meta = kept.node.metadata
        assert (meta["pos_start"], meta["pos_end"]) == (10, user_pos)
        assert kept.node.get_content() == expected_text(book, 10, user_pos)
        assert meta["sentences"] == [s.text for s in book.sentences[10 : user_pos + 1]]
        assert kept.score == 0.5
    assert chunks[start].metadata["pos_end"] == 15, "the retrieved node itself is not changed"


def test_chunks_before_are_whole_and_chunks_after_are_dropped(
    book: Book, chunks: dict[int, TextNode]
) -> None:
    kept = SpoilerTruncation(user_pos=13).postprocess_nodes(
        scored(chunks, (14, 0.9), (2, 0.8), (10, 0.7))
    )
    ranges = [(k.node.metadata["pos_start"], k.node.metadata["pos_end"]) for k in kept]
    assert ranges == [(2, 7), (10, 13)]  # 14..19 starts past the position
    assert [k.node.get_content() for k in kept] == [
        expected_text(book, 2, 7),
        expected_text(book, 10, 13),
    ]


def test_a_node_without_positions_is_an_error_not_a_pass() -> None:
    with pytest.raises(ValueError, match="pos_start"):
        SpoilerTruncation(user_pos=5).postprocess_nodes([NodeWithScore(node=TextNode(text="x"))])


def test_dedup_gives_each_sentence_once_in_reading_order(
    book: Book, chunks: dict[int, TextNode]
) -> None:
    # Retrieved by score, not by position; 6..11 and 10..15 overlap 6..15 with 2..7.
    hits = scored(chunks, (10, 0.6), (30, 0.9), (2, 0.5), (6, 0.8))
    passages = SentenceDedup().postprocess_nodes(hits)
    ranges = [(p.node.metadata["pos_start"], p.node.metadata["pos_end"]) for p in passages]
    assert ranges == [(2, 15), (30, 35)]
    assert [p.score for p in passages] == [0.8, 0.9]
    assert passages[0].node.get_content() == expected_text(book, 2, 15)
    sentences = [s for p in passages for s in p.node.metadata["sentences"]]
    assert len(sentences) == len(set(sentences)) == 14 + 6


def test_dedup_never_merges_across_chapters(book: Book, chunks: dict[int, TextNode]) -> None:
    end_of_one = max(start for start, c in chunks.items() if c.metadata["chapter"] == 1)
    start_of_two = min(start for start, c in chunks.items() if c.metadata["chapter"] == 2)
    assert chunks[end_of_one].metadata["pos_end"] + 1 == start_of_two  # adjacent sids
    passages = SentenceDedup().postprocess_nodes(
        scored(chunks, (start_of_two, 0.4), (end_of_one, 0.3))
    )
    assert [p.node.metadata["chapter"] for p in passages] == [1, 2]


def test_truncate_then_dedup_stays_within_the_position(
    book: Book, chunks: dict[int, TextNode]
) -> None:
    user_pos = 17
    hits = scored(chunks, *((start, 1.0 / (1 + start)) for start in sorted(chunks)))
    kept = SpoilerTruncation(user_pos=user_pos).postprocess_nodes(hits)
    passages = SentenceDedup().postprocess_nodes(kept)
    ranges = [(p.node.metadata["pos_start"], p.node.metadata["pos_end"]) for p in passages]
    assert ranges == [(0, 1), (2, user_pos)]  # the title page is chapter 0
    assert passages[1].node.get_content() == expected_text(book, 2, user_pos)


def test_cut_copies_leave_the_retrieved_chunks_as_they_were(
    chunks: dict[int, TextNode],
) -> None:
    """Regression: the copies are shallow now (a deep copy per chunk was most of a search's
    own time); cutting and merging must still never change the chunks they came from."""
    before = {start: (node.text, dict(node.metadata)) for start, node in chunks.items()}
    hits = scored(chunks, (10, 0.9), (14, 0.8), (18, 0.7))
    kept = SpoilerTruncation(user_pos=16).postprocess_nodes(hits)
    merged = SentenceDedup().postprocess_nodes(kept)
    assert merged[0].node.metadata["pos_end"] == 16
    for hit in hits:
        start = hit.node.metadata["pos_start"]
        assert (hit.node.text, hit.node.metadata) == before[start]
