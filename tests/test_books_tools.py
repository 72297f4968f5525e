"""books tools over a real MCP client on chapters 1-3 of Pride and Prejudice, once per engine."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from qdrant_client import models

from scoperag.core.contracts.books import BOOK_INDEXES, COLLECTION
from scoperag.core.filters.fields import index_plan
from scoperag.pipelines.book import Book, ingest_book
from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.books.service import BookService
from scoperag.server.runtime import Runtime
from scoperag.server.store_state.status import store_status


async def call(runtime: Runtime, tool: str, **arguments: Any) -> dict[str, Any]:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(tool, arguments)
    return result.structured_content


async def error(runtime: Runtime, tool: str, **arguments: Any) -> str:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(tool, arguments, raise_on_error=False)
    assert result.is_error, result.structured_content
    return result.content[0].text


def text_of(book: Book, first: int, last: int) -> str:
    return " ".join(s.text for s in book.sentences[first : last + 1])


async def test_schema_has_the_issue_parameters(books_runtime: Runtime) -> None:
    async with Client(build_server(books_runtime)) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
    expected = {
        "set_reading_position": ["book_id", "sentence", "chapter", "quote", "reader"],
        "get_reading_position": ["book_id", "reader"],
        "list_books": [],
        "search_book": ["book_id", "query", "top_k", "reader", "order", "explain"],
    }
    assert {name: list(tools[name].input_schema.get("properties", {})) for name in expected} == (
        expected
    )
    search = tools["search_book"].input_schema
    assert search["required"] == ["book_id", "query"]
    assert search["properties"]["top_k"]["default"] == 20
    assert tools["search_book"].annotations.readOnlyHint is True


async def test_list_books_counts_sentences_and_chapters(books_runtime: Runtime, book: Book) -> None:
    listed = await call(books_runtime, "list_books")
    [info] = listed["books"]
    assert info["book_id"] == "pride" and info["title"] == "Pride and Prejudice"
    assert (
        info["sentences"] == len(book.sentences) and info["chapters"] == book.sentences[-1].chapter
    )
    count = books_runtime.backend.count(COLLECTION, None)
    assert info["chunks"] == count
    declared = index_plan(BOOK_INDEXES)
    assert (declared["book_id"], declared["pos_start"]) == ("keyword", "integer")
    if books_runtime.settings.effective_backend != "local":  # local mode keeps no indexes
        assert set(books_runtime.backend.payload_indexes(COLLECTION)) >= set(declared)


async def test_position_by_sentence_chapter_and_quote(books_runtime: Runtime, book: Book) -> None:
    reader = "positions"
    by_sentence = await call(
        books_runtime, "set_reading_position", book_id="pride", sentence=40, reader=reader
    )
    assert (by_sentence["sid"], by_sentence["sentence"]) == (40, book.sentences[40].text)
    assert by_sentence["chapter"] == 1 and by_sentence["book_sentences"] == len(book.sentences)

    by_chapter = await call(
        books_runtime, "set_reading_position", book_id="pride", chapter=2, reader=reader
    )
    last_of_two = max(s.sid for s in book.sentences if s.chapter == 2)
    assert (by_chapter["sid"], by_chapter["chapter"]) == (last_of_two, 2)
    assert book.sentences[last_of_two + 1].chapter == 3

    target = next(s for s in book.sentences if s.text == "Mr. Bennet made no answer.")
    quoted = await call(
        books_runtime,
        "set_reading_position",
        book_id="pride",
        quote="  mr. BENNET   made no\nanswer ",
        reader=reader,
    )
    assert quoted["sid"] == target.sid
    saved = await call(books_runtime, "get_reading_position", book_id="pride", reader=reader)
    assert (saved["sid"], saved["sentence"], saved["chapter"]) == (target.sid, target.text, 1)


async def test_ambiguous_and_missing_quotes_list_candidates(books_runtime: Runtime) -> None:
    # A reader who has read the three chapters: the candidates are quoted (nothing is spoiled).
    await call(books_runtime, "set_reading_position", book_id="pride", reader="done", chapter=3)
    ambiguous = await error(
        books_runtime, "set_reading_position", book_id="pride", reader="done", quote="Mr. Bennet"
    )
    assert "occurs in" in ambiguous and "sid 5 (chapter 1)" in ambiguous
    assert "Mr. Bennet replied that he had not." in ambiguous
    missing = await error(
        books_runtime,
        "set_reading_position",
        book_id="pride",
        reader="done",
        quote="Mr. Bennet ate a pie",
    )
    assert "is not in 'pride'" in missing and "Closest sentences: sid" in missing


async def test_quote_errors_show_no_sentence_past_the_readers_position(
    books_runtime: Runtime, book: Book
) -> None:
    """Regression: candidate listings quoted sentences the reader had not read yet."""
    await call(books_runtime, "set_reading_position", book_id="pride", reader="new", sentence=3)
    for quote in ("Mr. Bennet", "Mr. Bennet ate a pie"):
        message = await error(
            books_runtime, "set_reading_position", book_id="pride", reader="new", quote=quote
        )
        assert "sid " in message and "not read yet" in message
        unread = [s.text for s in book.sentences[4:] if len(s.text) > 20]
        assert not [text for text in unread if text[:40] in message]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "exactly one of 'sentence', 'chapter' or 'quote' (got none)"),
        ({"sentence": 3, "chapter": 1}, "(got sentence=3, chapter=1)"),
        ({"sentence": 100000}, "Invalid value for 'sentence': 100000. Accepted: 0 to 197"),
        ({"chapter": 9}, "Invalid value for 'chapter': 9. Accepted: chapters 0-3"),
        ({"sentence": -1}, "Invalid value for 'sentence': -1"),
        ({"quote": "?!"}, "Invalid value for 'quote': \"?!\""),
    ],
)
async def test_bad_positions_name_parameter_value_and_accepted(
    books_runtime: Runtime, arguments: dict[str, Any], expected: str
) -> None:
    message = await error(books_runtime, "set_reading_position", book_id="pride", **arguments)
    assert expected in message


async def test_unknown_book_lists_the_books(books_runtime: Runtime) -> None:
    for tool, extra in [("get_reading_position", {}), ("search_book", {"query": "x"})]:
        message = await error(books_runtime, tool, book_id="Pride", **extra)
        assert "Invalid value for 'book_id': \"Pride\". Accepted: pride" in message


async def test_search_without_a_position_says_to_set_one(books_runtime: Runtime) -> None:
    message = await error(
        books_runtime, "search_book", book_id="pride", query="Netherfield", reader="nobody"
    )
    assert "No reading position is saved for reader 'nobody'" in message
    assert "set_reading_position" in message


async def test_a_book_search_asks_the_engine_once_and_still_names_an_unknown_book(
    books_runtime: Runtime, backend_name: str
) -> None:
    """The reader's position comes from the reading-state store and a hit shows that the book
    exists, so a search that finds passages is one engine operation; a position saved for a
    book that is not stored still gets the error listing the books."""
    if backend_name == "server":
        pytest.skip("operations are counted by the process that owns an embedded store")
    await call(books_runtime, "set_reading_position", book_id="pride", sentence=40, reader="one")
    BookService(books_runtime).state.set("gone", "one", 40)
    async with Client(build_server(books_runtime)) as client:
        for query in ("Netherfield is let at last", "a single man in possession"):
            before = store_status(books_runtime.settings)["owner"]["operations"]
            arguments = {"book_id": "pride", "query": query, "reader": "one"}
            assert (await client.call_tool("search_book", arguments)).structured_content["passages"]
            after = store_status(books_runtime.settings)["owner"]["operations"]
            assert sum(after.values()) - sum(before.values()) == 1, (before, after)
    message = await error(books_runtime, "search_book", book_id="gone", query="x", reader="one")
    assert "Invalid value for 'book_id': \"gone\". Accepted: pride" in message


async def test_search_cuts_the_straddling_chunk_exactly_at_the_position(
    books_runtime: Runtime, book: Book
) -> None:
    reader, user_pos = "straddle", 12  # inside the chunk of sids 10..15
    await call(
        books_runtime, "set_reading_position", book_id="pride", sentence=user_pos, reader=reader
    )
    result = await call(
        books_runtime,
        "search_book",
        book_id="pride",
        query=text_of(book, 10, 15),  # that chunk is the best hit
        top_k=3,
        reader=reader,
    )
    assert result["user_pos"] == user_pos and result["sentences_cut"] > 0
    assert 1 <= result["chunks_cut"] <= result["chunks_retrieved"] == 3
    ends = [(p["pos_start"], p["pos_end"]) for p in result["passages"]]
    assert any(end == user_pos for _, end in ends), ends
    returned = " ".join(p["text"] for p in result["passages"])
    for later in book.sentences[user_pos + 1 : 16]:
        assert later.text not in returned


async def test_search_passages_are_within_the_position_best_first_and_once(
    books_runtime: Runtime, book: Book
) -> None:
    reader = "order"
    await call(books_runtime, "set_reading_position", book_id="pride", chapter=2, reader=reader)
    user_pos = max(s.sid for s in book.sentences if s.chapter == 2)
    result = await call(
        books_runtime,
        "search_book",
        book_id="pride",
        query="Mr. Bennet visits Mr. Bingley",
        reader=reader,
    )
    passages = result["passages"]
    assert result["chunks_retrieved"] == 20 and passages
    scores = [passage["score"] for passage in passages]
    assert scores == sorted(scores, reverse=True)  # best first
    previous_end = -1
    for passage in sorted(passages, key=lambda p: p["pos_start"]):
        first, last = passage["pos_start"], passage["pos_end"]
        assert previous_end < first <= last <= user_pos  # no overlap
        assert passage["text"] == text_of(book, first, last)  # each sentence once, none later
        assert passage["chapter"] == book.sentences[first].chapter
        previous_end = last


async def test_search_passages_in_reading_order_when_asked(
    books_runtime: Runtime, book: Book
) -> None:
    """order='reading' lists the same passages as the default (best first), by sentence id;
    the tool's description says which order is which."""
    reader = "reading-order"
    await call(books_runtime, "set_reading_position", book_id="pride", chapter=2, reader=reader)
    asked = {"book_id": "pride", "query": "Mr. Bennet visits Mr. Bingley", "reader": reader}
    by_score = (await call(books_runtime, "search_book", **asked))["passages"]
    in_book = (await call(books_runtime, "search_book", order="reading", **asked))["passages"]
    assert len(in_book) > 1
    starts = [passage["pos_start"] for passage in in_book]
    assert starts == sorted(starts) and starts != [p["pos_start"] for p in by_score]
    assert sorted(by_score, key=lambda p: p["pos_start"]) == in_book
    async with Client(build_server(books_runtime)) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
    description = tools["search_book"].description or ""
    assert "best score first" in description and "in reading order" not in description
    assert "'order'" in await error(books_runtime, "search_book", order="chapter", **asked)


async def test_top_k_and_query_are_validated(books_runtime: Runtime) -> None:
    assert "'top_k'" in await error(
        books_runtime, "search_book", book_id="pride", query="x", top_k=0
    )
    assert "'query'" in await error(books_runtime, "search_book", book_id="pride", query="")


def _stdio(runtime: Runtime) -> StdioTransport:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    settings = runtime.settings
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(settings.data_dir), "SCOPERAG_PROFILES": "books"}
    if settings.qdrant_url:
        env["SCOPERAG_QDRANT_URL"] = settings.qdrant_url
    else:
        env["SCOPERAG_BACKEND"] = settings.effective_backend
    return StdioTransport(command=script, args=["serve"], env=env, keep_alive=False)


async def test_the_position_survives_a_server_restart(books_runtime: Runtime, book: Book) -> None:
    reader = "restart"
    await call(books_runtime, "set_reading_position", book_id="pride", sentence=77, reader=reader)
    books_runtime.close()  # stop this server's hold on the store; it reopens on next use
    async with Client(_stdio(books_runtime)) as client:  # a new `scoperag serve` process
        result = await client.call_tool(
            "get_reading_position", {"book_id": "pride", "reader": reader}
        )
        assert result.structured_content["sid"] == 77
        await client.call_tool(
            "set_reading_position", {"book_id": "pride", "chapter": 3, "reader": reader}
        )
    fresh = Runtime(books_runtime.settings)  # and a new in-process server on the same data dir
    try:
        saved = await call(fresh, "get_reading_position", book_id="pride", reader=reader)
    finally:
        fresh.close()
    assert saved["sid"] == book.sentences[-1].sid and saved["chapter"] == 3


async def test_reingesting_replaces_the_book(
    make_runtime: Callable[..., Runtime], book_path: Path, book: Book
) -> None:
    runtime = make_runtime(profiles=["books"])
    for last_chapter in (book.sentences[-1].chapter, 2, 2):
        report = ingest_book(
            book_path, runtime.backend, runtime.embedder, "pride", last_chapter=last_chapter
        )
    third = models.Filter(
        must=[models.FieldCondition(key="chapter", match=models.MatchValue(value=3))]
    )
    assert runtime.backend.count(COLLECTION, third) == 0
    assert runtime.backend.count(COLLECTION, None) == report.chunks
    listed = await call(runtime, "list_books")
    assert (
        listed["books"][0]["sentences"] == max(s.sid for s in book.sentences if s.chapter == 2) + 1
    )


def test_cli_rejects_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("Chapter 1\n\nCaf\xe9 au lait.".encode("latin-1"))
    result = CliRunner().invoke(cli, ["ingest", "book", str(path), "--book-id", "cafe"])
    assert result.exit_code == 1
    assert "latin1.txt: not ingested, it is not UTF-8 text" in result.output
