"""Spoiler leakage of `search_book`: (position, question) pairs over a whole book, through MCP.

The book is ingested by the real pipeline (once: the store is kept in evals/cache/ and reused
while the book's sentence count matches). Reading positions are spread over the book and set
through `set_reading_position` in all three ways (sentence id, finished chapter, quote); each
question then goes through `search_book` on an in-memory `fastmcp.Client`. Every passage
returned is checked against the book read independently: its text must be exactly the book's
sentences pos_start..pos_end, and no sentence may lie past the position. A control runs the
same questions as plain dense top-k over the book (no position filter, no truncation), which
shows how many later sentences an unprotected search would have returned.

    python evals/spoiler_leakage.py                     # whole book, 40 positions x 12 questions
    python evals/spoiler_leakage.py --positions 8 --last-chapter 10   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import Client  # noqa: E402

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.core.contracts.books import BOOK_ID, COLLECTION  # noqa: E402
from scoperag.core.filters.fields import build_filter  # noqa: E402
from scoperag.pipelines.book import Book, ingest_book, read_book  # noqa: E402
from scoperag.retrievers.book_lookup import BookLookup  # noqa: E402
from scoperag.retrievers.filtered import FilteredRetriever  # noqa: E402
from scoperag.server.mcp.app import build_server  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BOOK_PATH = REPO.parent / "shared" / "data" / "books" / "pg1342-pride-and-prejudice.txt"
CACHE = REPO / "evals" / "cache" / "spoiler_leakage"
NAME = "pride"
QUESTIONS = [
    "Who is Mr. Darcy and what do people think of him?",
    "What does Mr. Bingley feel for Jane?",
    "Why does Elizabeth dislike Mr. Darcy?",
    "Whom does Mr. Collins want to marry?",
    "What happened between Lydia and Mr. Wickham?",
    "What is Pemberley like?",
    "What did Lady Catherine say to Elizabeth?",
    "Does Mr. Darcy propose to Elizabeth, and what does she answer?",
    "What does Darcy's letter reveal?",
    "Who marries whom in the end?",
    "What does Mrs. Bennet want for her daughters?",
    "Why does Jane stay at Netherfield?",
]


@dataclass
class Tally:
    """Counts over every (position, question) pair."""

    pairs: int = 0
    passages: int = 0
    sentences_returned: int = 0
    sentences_past_position: int = 0
    passages_not_matching_book: int = 0
    chunks_retrieved: int = 0
    chunks_kept: int = 0
    chunks_cut: int = 0
    sentences_cut: int = 0
    control_hits: int = 0
    control_sentences_past_position: int = 0
    latencies_ms: list[float] = field(default_factory=list)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def ensure_ingested(runtime: Runtime, book: Book, last_chapter: int | None) -> dict[str, Any]:
    """Ingest unless the cached store already holds this book; returns throughput figures."""
    backend = runtime.backend
    stored = BookLookup(backend).book_ids()
    if NAME in stored and BookLookup(backend).sentence_count(NAME) == len(book.sentences):
        return {"ingest": f"reused the store cached in {runtime.settings.data_dir}"}
    runtime.embedder.embed_query("load the model before timing")
    started, cpu = time.perf_counter(), time.process_time()
    report = ingest_book(BOOK_PATH, backend, runtime.embedder, NAME, last_chapter=last_chapter)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    return {
        "ingest": f"{report.sentences} sentences, {report.chapters} chapters, "
        f"{report.chunks} chunks in {seconds:.1f} s wall / {cpu_seconds:.1f} s CPU",
        "throughput": f"{report.chunks / seconds:.1f} chunks/s, "
        f"{report.sentences / seconds:.1f} sentences/s (embedding included)",
    }


def positions(book: Book, count: int) -> list[tuple[dict[str, Any], int]]:
    """(`set_reading_position` arguments, the sid they stand for), spread over the book."""
    total = len(book.sentences)
    chapters = [n for n in book.chapter_numbers if n > 0]
    out: list[tuple[dict[str, Any], int]] = []
    for i in range(count):
        sid = round((i + 0.5) * total / count)
        if i % 4 == 1:
            chapter = chapters[min(len(chapters) - 1, i * len(chapters) // count)]
            end = max(s.sid for s in book.sentences if s.chapter == chapter)
            out.append(({"chapter": chapter}, end))
        elif i % 4 == 3:
            longest = max(book.sentences[sid : sid + 10], key=lambda s: len(s.text))
            out.append(({"quote": longest.text.upper()}, longest.sid))  # case must not matter
        else:
            out.append(({"sentence": sid}, sid))
    return out


def check(book: Book, user_pos: int, result: dict[str, Any], tally: Tally) -> None:
    """Add one search result's passages to the tally, against the book itself."""
    tally.chunks_retrieved += result["chunks_retrieved"]
    tally.chunks_cut += result["chunks_cut"]
    tally.sentences_cut += result["sentences_cut"]
    tally.chunks_kept += result["chunks_kept"]
    for passage in result["passages"]:
        first, last = passage["pos_start"], passage["pos_end"]
        tally.passages += 1
        tally.sentences_returned += last - first + 1
        tally.sentences_past_position += sum(1 for sid in range(first, last + 1) if sid > user_pos)
        expected = " ".join(s.text for s in book.sentences[first : last + 1])
        if passage["text"] != expected:
            tally.passages_not_matching_book += 1


def control(runtime: Runtime, query: str, user_pos: int, top_k: int, tally: Tally) -> None:
    """Plain dense top-k over the book: what leaks without the position filter and truncation."""
    flt = build_filter([BOOK_ID], {"book_id": NAME})
    retriever = FilteredRetriever(runtime.backend, runtime.embedder, COLLECTION, flt, top_k)
    for hit in retriever.retrieve(query):
        tally.control_hits += 1
        first, last = hit.node.metadata["pos_start"], hit.node.metadata["pos_end"]
        tally.control_sentences_past_position += sum(
            1 for sid in range(first, last + 1) if sid > user_pos
        )


async def run(args: argparse.Namespace) -> int:
    book = read_book(BOOK_PATH, NAME, last_chapter=args.last_chapter)
    part = f"upto-{args.last_chapter}" if args.last_chapter is not None else "whole"
    data_dir = CACHE / f"{args.backend}-{part}"
    runtime = Runtime(Settings(data_dir=data_dir, profiles=["books"], backend=args.backend))
    figures = ensure_ingested(runtime, book, args.last_chapter)
    tally = Tally()
    modes: dict[str, int] = {}
    async with Client(build_server(runtime)) as client:
        for arguments, expected_sid in positions(book, args.positions):
            mode = next(iter(arguments))
            set_result = await client.call_tool(
                "set_reading_position", {"book_id": NAME, **arguments}, raise_on_error=False
            )
            if set_result.is_error:  # e.g. a quote found more than once
                print(f"  {mode} position refused: {set_result.content[0].text[:120]}")
                continue
            user_pos = set_result.structured_content["sid"]
            key = f"{mode} ({'right' if user_pos == expected_sid else 'WRONG'} sid)"
            modes[key] = modes.get(key, 0) + 1
            for question in QUESTIONS:
                started = time.perf_counter()
                found = await client.call_tool(
                    "search_book", {"book_id": NAME, "query": question, "top_k": args.top_k}
                )
                tally.latencies_ms.append((time.perf_counter() - started) * 1000)
                tally.pairs += 1
                check(book, found.structured_content["user_pos"], found.structured_content, tally)
                control(runtime, question, user_pos, args.top_k, tally)
    runtime.close()
    report(args, book, figures, modes, tally)
    wrong = sum(count for key, count in modes.items() if "WRONG" in key)
    return 1 if tally.sentences_past_position or tally.passages_not_matching_book or wrong else 0


def report(
    args: argparse.Namespace,
    book: Book,
    figures: dict[str, Any],
    modes: dict[str, int],
    tally: Tally,
) -> None:
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"book: {len(book.sentences)} sentences, engine {args.backend}, top_k {args.top_k}")
    for name, value in figures.items():
        print(f"{name}: {value}")
    print(f"positions set by: {modes}; pairs (position, question): {tally.pairs}")
    print(
        f"search_book returned {tally.passages} passages, {tally.sentences_returned} sentences; "
        f"sentences past the position: {tally.sentences_past_position} (must be 0); "
        f"passages whose text is not the book's sentences: {tally.passages_not_matching_book}"
    )
    print(
        f"hits retrieved: {tally.chunks_retrieved}, kept: {tally.chunks_kept}, "
        f"cut at the position: {tally.chunks_cut} ({tally.sentences_cut} sentences cut)"
    )
    print(
        f"control, dense top-k without the position filter: {tally.control_hits} hits carrying "
        f"{tally.control_sentences_past_position} sentences past the position"
    )
    lat = tally.latencies_ms
    print(
        f"search_book latency through MCP: p50 {percentile(lat, 0.5):.1f} ms, "
        f"p95 {percentile(lat, 0.95):.1f} ms, mean {statistics.mean(lat):.1f} ms"
    )
    print(f"peak memory (max RSS): {rss_mb:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=40, help="Reading positions.")
    parser.add_argument("--top-k", type=int, default=20, help="search_book's top_k.")
    parser.add_argument("--last-chapter", type=int, default=None, help="Only up to chapter N.")
    parser.add_argument("--backend", choices=["local", "edge"], default="local")
    sys.exit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
