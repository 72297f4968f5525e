"""Where each reader is in each book: one SQLite row per (book_id, reader), kept across restarts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from scoperag.core.config.settings import Settings

_SCHEMA = """
CREATE TABLE IF NOT EXISTS reading_positions (
    book_id TEXT NOT NULL,
    reader TEXT NOT NULL,
    sid INTEGER NOT NULL CHECK (sid >= 0),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (book_id, reader)
)
"""


class SavedPosition(BaseModel):
    """The last sentence a reader has read in a book."""

    book_id: str
    reader: str
    sid: int = Field(ge=0, description="Sentence id of the last sentence read.")
    updated_at: datetime


class ReadingState:
    """Reading positions in a SQLite file (by default `state.sqlite` in the data dir)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=10)) as connection, connection:
            connection.execute(_SCHEMA)
            yield connection

    def get(self, book_id: str, reader: str) -> SavedPosition | None:
        with self._connect() as connection:
            row = connection.execute(
                "SELECT sid, updated_at FROM reading_positions WHERE book_id = ? AND reader = ?",
                (book_id, reader),
            ).fetchone()
        if row is None:
            return None
        return SavedPosition(book_id=book_id, reader=reader, sid=row[0], updated_at=row[1])

    def set(self, book_id: str, reader: str, sid: int) -> SavedPosition:
        saved = SavedPosition(book_id=book_id, reader=reader, sid=sid, updated_at=datetime.now(UTC))
        return self.put(saved)

    def put(self, saved: SavedPosition) -> SavedPosition:
        """Write `saved` as it is (its time included), replacing the reader's position."""
        with self._connect() as connection:
            connection.execute(
                "INSERT INTO reading_positions (book_id, reader, sid, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (book_id, reader) "
                "DO UPDATE SET sid = excluded.sid, updated_at = excluded.updated_at",
                (saved.book_id, saved.reader, saved.sid, saved.updated_at.isoformat()),
            )
        return saved

    def all(self) -> list[SavedPosition]:
        """Every reader's position in every book."""
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT book_id, reader, sid, updated_at FROM reading_positions "
                "ORDER BY book_id, reader"
            ).fetchall()
        keys = ("book_id", "reader", "sid", "updated_at")
        return [SavedPosition(**dict(zip(keys, row, strict=True))) for row in rows]


def export_state(settings: Settings) -> dict[str, Any]:
    """What an export carries beside the books collection: every reader's position."""
    positions = ReadingState(settings.state_path).all()
    return {"reading_positions": [saved.model_dump(mode="json") for saved in positions]}


def checked_state(state: dict[str, Any]) -> list[SavedPosition]:
    """The reading positions of an export's state; `ValueError` says what is wrong."""
    items = state.get("reading_positions", [])
    if not isinstance(items, list):
        raise ValueError("'reading_positions' must be a list")
    return [SavedPosition.model_validate(item) for item in items]


def import_state(settings: Settings, state: dict[str, Any]) -> int:
    """Restore the reading positions of an export (each replaces that reader's); how many."""
    reading = ReadingState(settings.state_path)
    positions = checked_state(state)
    for saved in positions:
        reading.put(saved)
    return len(positions)
