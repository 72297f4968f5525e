"""Damaged collections on a real Qdrant Edge store: each kind of damage is an error naming the
collection, its path and what to do, and the other collections keep answering."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.search_request import SearchRequest
from scoperag.core.engine.store_check import CorruptCollectionError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evals"))
from damage_cases import DAMAGE, QUERY, RECOVERED, build_store, whole_segment  # noqa: E402


def reads(backend: EdgeBackend, collection: str) -> None:
    """A count, a page of payloads and a search."""
    backend.count(collection, None)
    backend.scroll(collection, None, limit=10)
    backend.search(SearchRequest(collection=collection, dense=QUERY, limit=5))


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_collection_is_an_error_naming_it_and_the_rest_answers(
    damage: str, tmp_path: Path
) -> None:
    root = tmp_path / "edge"
    build_store(root)
    DAMAGE[damage](root)
    backend = EdgeBackend.open(root)
    try:
        with pytest.raises(CorruptCollectionError) as refused:
            reads(backend, "damaged")
        message = str(refused.value)
        assert "Collection 'damaged'" in message and str(root / "damaged") in message
        assert "scoperag check" in message and "ingest its sources again" in message
        assert backend.count("intact", None) == 50
        hits = backend.search(SearchRequest(collection="intact", dense=QUERY, limit=5)).hits
        assert len(hits) == 5 and all(-1.001 <= hit.score <= 1.001 for hit in hits)
    finally:
        backend.close()


def test_an_intact_store_reads_as_stored(tmp_path: Path) -> None:
    """Fused (dense + BM25) scores are not cosines: they may exceed 1 and are not refused."""
    root = tmp_path / "edge"
    build_store(root)
    backend = EdgeBackend.open(root)
    try:
        reads(backend, "damaged")
        assert backend.count("damaged", None) == 50
        for words in ("point number 7", "number", "point 12 number 40"):
            request = SearchRequest(collection="damaged", dense=QUERY, text=words, limit=10)
            assert len(backend.search(request).hits) == 10
    finally:
        backend.close()


@pytest.mark.parametrize("state", list(RECOVERED))
def test_a_state_the_engine_recovers_from_is_served_whole(state: str, tmp_path: Path) -> None:
    """A half-made segment folder (a process killed while Qdrant Edge built one) made the file
    pre-check call the collection damaged, though the engine drops it and serves every point."""
    root = tmp_path / "edge"
    build_store(root)
    RECOVERED[state](root / "damaged" / "shard")
    backend = EdgeBackend.open(root)
    try:
        reads(backend, "damaged")
        assert backend.count("damaged", None) == 50
        hits = backend.search(SearchRequest(collection="damaged", dense=QUERY, limit=50)).hits
        assert sorted(hit.id for hit in hits) == list(range(50))
    finally:
        backend.close()


def test_a_shard_whose_segments_are_gone_is_served_from_its_write_ahead_log(
    tmp_path: Path,
) -> None:
    """The engine replays its WAL into a new segment; a count below the acknowledged one would
    be the ledger's `LostWritesError`, not a file pre-check's refusal."""
    root = tmp_path / "edge"
    build_store(root)
    shutil.rmtree(whole_segment(root / "damaged" / "shard"))
    backend = EdgeBackend.open(root)
    try:
        assert backend.count("damaged", None) == 50
    finally:
        backend.close()
