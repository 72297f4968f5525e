"""Kills (SIGKILL) during `scoperag ingest book` at several moments, then what readers see.

Between a kill and the next run, searches, counts and the book listing must show one whole
version (the old or the new), never a mix; the final re-run must leave exactly the points of
a clean run. Part of `evals/reliability.py`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from qdrant_client import models

from scoperag.core.contracts.books import COLLECTION
from scoperag.core.embeddings import Embedder
from scoperag.core.generations import GENERATION_KEY, REGISTRY_KEY
from scoperag.core.settings import Settings
from scoperag.retrievers.book_lookup import BookLookup
from scoperag.retrievers.filtered import FilteredRetriever
from scoperag.server.runtime import Runtime

BOOK_ID = "pride"
QUERIES = ["Mr. Bennet and his wife", "a ball at Meryton", "Mr. Darcy is proud", "Jane is ill"]
SCOPERAG = str(Path(sys.executable).parent / "scoperag")


@dataclass
class KillFigures:
    kills: int = 0
    states: list[str] = field(default_factory=list)  # what readers saw after each kill
    searches: int = 0
    mixed: int = 0  # searches, counts or listings showing more than one version
    clean_points: int = 0
    final_points: int = 0
    final_registry: list = field(default_factory=list)
    clean_seconds: float = 0.0


def ingest(data_dir: Path, book: Path, last_chapter: int) -> subprocess.Popen:
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_BACKEND": "edge"}
    command = [SCOPERAG, "ingest", "book", str(book), "--book-id", BOOK_ID]
    command += ["--last-chapter", str(last_chapter), "--json"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finished(process: subprocess.Popen) -> None:
    if process.wait() != 0:
        raise SystemExit(f"ingest failed: {process.stderr.read().decode()[-2000:]}")


def stored_points(runtime: Runtime) -> int:
    """Every point of the book, hidden ones too (what is on disk)."""
    backend = runtime.backend
    return sum(
        1
        for page in backend.points(COLLECTION)
        for record in page
        if (record.payload or {}).get("book_id") == BOOK_ID
    )


def look(runtime: Runtime, versions: set[int], figures: KillFigures) -> int:
    """What readers see now: one whole version (its point count), else a counted mix."""
    backend = runtime.backend
    book = models.Filter(
        must=[models.FieldCondition(key="book_id", match=models.MatchValue(value=BOOK_ID))]
    )
    visible = backend.count(COLLECTION, book)
    generations = backend.facet(COLLECTION, GENERATION_KEY, book, 10)
    summary = BookLookup(backend).summary(BOOK_ID)
    whole = visible in versions and len(generations) <= 1
    whole = whole and (summary is None) == (visible == 0)
    for query in QUERIES:
        retriever = FilteredRetriever(backend, runtime.embedder, COLLECTION, book, top_k=50)
        seen = {hit.node.metadata.get(GENERATION_KEY) for hit in retriever.retrieve(query)}
        figures.searches += 1
        figures.mixed += len(seen) > 1 or not seen <= set(generations)
    figures.mixed += not whole
    return visible


def run_kills(book: Path, embedder: Embedder, fractions: list[float], chapters: tuple[int, int]):
    """Ingest version A (chapters 1..a), then replace it with B and A in turn, killing each
    run at `fraction` of a clean run's duration; finally one complete run of B."""
    small, large = chapters
    figures = KillFigures()
    root = Path(tempfile.mkdtemp(prefix="scoperag-kills-"))
    started = time.perf_counter()
    finished(ingest(root / "clean", book, large))
    figures.clean_seconds = time.perf_counter() - started
    with_runtime = lambda path: Runtime(Settings(data_dir=path, backend="edge"), embedder)  # noqa: E731
    clean = with_runtime(root / "clean")
    figures.clean_points = stored_points(clean)
    clean.close()
    finished(ingest(root / "killed", book, small))
    runtime = with_runtime(root / "killed")
    counts = {small: runtime.backend.count(COLLECTION, None), large: figures.clean_points}
    runtime.close()
    visible = counts[small]
    for fraction in fractions:
        target = large if visible == counts[small] else small  # replace what readers see now
        process = ingest(root / "killed", book, target)
        time.sleep(fraction * figures.clean_seconds)
        process.send_signal(signal.SIGKILL)
        process.wait()
        figures.kills += 1
        runtime = with_runtime(root / "killed")
        visible = look(runtime, set(counts.values()), figures)
        hidden = len(runtime.backend.collection_metadata(COLLECTION).get(REGISTRY_KEY) or [])
        figures.states.append(
            f"kill at {fraction:.0%}: {visible} points visible "
            f"({'new' if visible == counts[target] else 'old'} version), "
            f"{stored_points(runtime) - visible} hidden leftovers, {hidden} registry entries"
        )
        runtime.close()
    finished(ingest(root / "killed", book, large))
    runtime = with_runtime(root / "killed")
    figures.final_points = stored_points(runtime)
    figures.final_registry = runtime.backend.collection_metadata(COLLECTION)[REGISTRY_KEY]
    look(runtime, {figures.clean_points}, figures)
    runtime.close()
    return figures
