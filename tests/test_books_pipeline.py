"""books pipeline on the real Pride and Prejudice file: Gutenberg text, chapters, sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoperag.core.contracts.books import BookChunkPayload
from scoperag.pipelines.book import (
    Book,
    BookRejectedError,
    SentenceWindows,
    chapter_documents,
    read_book,
)
from scoperag.pipelines.chapters import FRONT_MATTER, split_chapters
from scoperag.pipelines.gutenberg import read_text, strip_gutenberg
from scoperag.pipelines.sentences import split_sentences


@pytest.fixture(scope="session")
def pride(book_path: Path) -> Book:
    return read_book(book_path, "pride")


def test_the_file_is_read_without_bom_and_with_one_line_ending(book_path: Path) -> None:
    raw = book_path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw  # what this test is about
    text = read_text(book_path)
    assert not text.startswith("\ufeff") and "\r" not in text


def test_gutenberg_header_and_licence_are_left_out(book_path: Path) -> None:
    book = strip_gutenberg(read_text(book_path))
    assert book.gutenberg and book.title == "Pride and Prejudice"
    assert book.body.startswith("PRIDE AND PREJUDICE")
    assert book.body.endswith("had been the means of uniting them.")
    for boilerplate in ("Project Gutenberg", "*** START", "Produced by", "FULL LICENSE"):
        assert boilerplate not in book.body


def test_any_bom_and_line_ending_give_the_same_sentences(
    book_path: Path, pride: Book, tmp_path: Path
) -> None:
    text = read_text(book_path)
    variants = {"lf.txt": text.encode(), "cr.txt": ("\ufeff" + text.replace("\n", "\r")).encode()}
    for name, data in variants.items():
        (tmp_path / name).write_bytes(data)
        assert read_book(tmp_path / name, "pride").sentences == pride.sentences, name


def test_the_61_chapters_are_found_in_order(pride: Book) -> None:
    assert pride.chapter_numbers == list(range(62))  # 0 = the title page before Chapter 1
    first = next(s for s in pride.sentences if s.chapter == 1)
    assert first.chapter_title == "Chapter 1"
    assert first.text.startswith("It is a truth universally acknowledged")
    assert [s.text for s in pride.sentences if s.chapter == 0] == [
        "PRIDE AND PREJUDICE",
        "By Jane Austen",
    ]
    assert not any(s.text.startswith("Chapter ") for s in pride.sentences)


def test_sentence_ids_are_global_and_in_reading_order(pride: Book) -> None:
    assert [s.sid for s in pride.sentences] == list(range(len(pride.sentences)))
    chapters = [s.chapter for s in pride.sentences]
    assert chapters == sorted(chapters)
    assert pride.sentences[-1].text.endswith("had been the means of uniting them.")


def test_no_sentence_breaks_after_mr_or_mrs(pride: Book) -> None:
    texts = [s.text for s in pride.sentences]
    assert not [t for t in texts if t.endswith(("Mr.", "Mrs.", "St."))]
    assert (
        "“My dear Mr. Bennet,” said his lady to him one day, “have you heard that Netherfield "
        "Park is let at last?”"
    ) in texts
    assert "Mr. Bennet replied that he had not." in texts
    # After a dash and behind a curly quote, where Punkt alone breaks:
    assert any("five altogether--Mr. Bingley, his two sisters" in t for t in texts)
    assert any(t.startswith("“Mr. Darcy") for t in texts)


def test_the_splitter_keeps_abbreviations_and_speech_tags() -> None:
    assert split_sentences(
        "We dined at 5 p.m. on Monday with Mrs. Long. “Is he come?” cried she. Mr. Darcy bowed."
    ) == [
        "We dined at 5 p.m. on Monday with Mrs. Long.",
        "“Is he come?” cried she.",
        "Mr. Darcy bowed.",
    ]


def test_roman_and_titled_headings_and_a_table_of_contents() -> None:
    body = (
        "CONTENTS\n\nCHAPTER I. Down the Hole\n\nCHAPTER II. The Pool\n\n"
        "CHAPTER I.\nDown the Rabbit-Hole\n\nAlice was tired. She sat.\n\n"
        "Chapter II: The Pool of Tears\n\n“Curiouser!” cried Alice.\n"
    )
    chapters = split_chapters(body, "Alice")
    assert [(c.number, c.title) for c in chapters] == [
        (0, FRONT_MATTER),
        (1, "Down the Rabbit-Hole"),
        (2, "The Pool of Tears"),
    ]
    assert chapters[1].text == "Alice was tired. She sat."
    assert split_chapters("No headings here.", "Essay")[0].title == "Essay"


def test_chunks_are_overlapping_windows_inside_one_chapter(pride: Book) -> None:
    parser = SentenceWindows(window=6, overlap=2)
    chunks = parser(chapter_documents(pride))
    covered: set[int] = set()
    previous = None
    for chunk in chunks:
        payload = BookChunkPayload.model_validate(chunk.metadata)
        sids = range(payload.pos_start, payload.pos_end + 1)
        assert [pride.sentences[sid].text for sid in sids] == payload.sentences
        assert {pride.sentences[sid].chapter for sid in sids} == {payload.chapter}
        assert len(payload.sentences) <= 6 and chunk.ref_doc_id == "pride"
        if previous and previous.chapter == payload.chapter:
            assert payload.pos_start == previous.pos_end - 1  # two sentences shared
        covered.update(sids)
        previous = payload
    assert covered == set(range(len(pride.sentences)))


def test_bad_files_are_rejected_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes("Chapter 1\n\nCaf\xe9.".encode("latin-1"))
    (tmp_path / "empty.txt").write_text("  \n\n ")
    cases = {"latin1.txt": "not UTF-8", "empty.txt": "no text", "missing.txt": "does not exist"}
    for name, reason in cases.items():
        with pytest.raises(BookRejectedError, match=reason):
            read_book(tmp_path / name, "x")
    with pytest.raises(BookRejectedError, match="book id is empty"):
        read_book(tmp_path / "empty.txt", " ")


def test_last_chapter_keeps_the_same_sentence_ids(book_path: Path, pride: Book) -> None:
    part = read_book(book_path, "pride", last_chapter=3)
    assert part.chapter_numbers == [0, 1, 2, 3]
    assert part.sentences == pride.sentences[: len(part.sentences)]
