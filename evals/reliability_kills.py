"""Kills (SIGKILL) during `scoperag ingest book` at several moments, then what readers see.

Between a kill and the next run, searches, counts and the book listing must show one whole
version (the old or the new), never a mix; the final re-run must leave exactly the points of
a clean run. Part of `evals/reliability.py`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.books import COLLECTION
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.generations import GENERATION_KEY, REGISTRY_KEY
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


# When to kill: while embedding (at 40% of a clean run's time), once the new version is being
# written (registry entry `writing`, then after a delay), or right after the flip (`retiring`).
MOMENTS = [("embedding", 0.0), ("writing", 1.0), ("writing", 2.5), ("retiring", 0.0)]


def _phase(data_dir: Path) -> str | None:
    """The phase of the book's replacement as the registry on disk says (None: none running)."""
    path = data_dir / "edge" / COLLECTION / "collection.json"
    try:
        entries = json.loads(path.read_text())["metadata"].get(REGISTRY_KEY) or []
    except (OSError, ValueError, KeyError):
        return None
    return entries[0]["phase"] if entries else None


def _kill_at(process: subprocess.Popen, data_dir: Path, moment: tuple[str, float], clean: float):
    """Wait for the moment, then SIGKILL; False if the run ended before it."""
    phase, delay = moment
    if phase == "embedding":
        time.sleep(0.4 * clean)
    else:
        while _phase(data_dir) != phase:
            if process.poll() is not None:
                return False
            time.sleep(0.005)
        time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    return process.wait() == -signal.SIGKILL


def run_kills(book: Path, embedder: Embedder, count: int, chapters: tuple[int, int]):
    """Ingest version A (chapters 1..a), then replace it with B and A in turn, killing each
    run at one of `MOMENTS`; finally one complete run of B."""
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
    for number in range(count):
        moment = MOMENTS[number % len(MOMENTS)]
        target = large if visible == counts[small] else small  # replace what readers see now
        process = ingest(root / "killed", book, target)
        killed = _kill_at(process, root / "killed", moment, figures.clean_seconds)
        figures.kills += killed
        runtime = with_runtime(root / "killed")
        visible = look(runtime, set(counts.values()), figures)
        hidden = len(runtime.backend.collection_metadata(COLLECTION).get(REGISTRY_KEY) or [])
        when = f"{moment[0]} +{moment[1]:g} s" if killed else f"{moment[0]} (run ended first)"
        figures.states.append(
            f"kill while {when}: {visible} points visible "
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
