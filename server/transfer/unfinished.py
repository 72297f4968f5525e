"""Imports that stopped before the end of their file: a record per file, kept in the data dir.

Qdrant Edge has no transaction over many upserts, and an import replaces the points it names
(a point keeps its id), so a part of a file cannot be held back from readers the way a new
ingestion's generation is. Instead, an import records in `<data dir>/imports/` how far it got
(after each page the engine acknowledged: the file, its last line written, the points) and
removes the record once it has read the whole file. A record left behind is an import that was
killed or stopped: `scoperag list`, `scoperag check` and the next import of that file say so,
and running it again converges (every point is written again under its own id).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from scoperag.core.engine.edge.ledger import write_durably

FOLDER = "imports"


class ImportRecord(BaseModel):
    """How far an import of one file got, and the process running it."""

    file: str
    started_at: str
    pid: int = 0
    host: str = ""
    line: int = 0
    points: int = 0

    def running(self) -> bool:
        """Whether the process that wrote the record still runs (on this machine)."""
        if self.host != socket.gethostname() or self.pid <= 0:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def message(self) -> str:
        if self.running():
            return (
                f"import of {self.file} (started {self.started_at}) is running in process "
                f"{self.pid}: {self.points} points written, up to line {self.line}"
            )
        return (
            f"import of {self.file} (started {self.started_at}) stopped after line {self.line} "
            f"({self.points} points written); run it again to finish"
        )


def _path(data_dir: Path, file: Path) -> Path:
    key = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:24]
    return data_dir / FOLDER / f"{key}.json"


def stopped_import(data_dir: Path, file: Path) -> ImportRecord | None:
    """The record an earlier import of `file` left, if it stopped before the end."""
    return _read(_path(data_dir, file))


def _read(path: Path) -> ImportRecord | None:
    try:
        return ImportRecord.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return None


def stopped_imports(data_dir: Path) -> list[ImportRecord]:
    """Every import of this data dir that stopped before the end of its file."""
    found = (_read(path) for path in sorted((data_dir / FOLDER).glob("*.json")))
    return [record for record in found if record is not None]


class Progress:
    """The record of one running import, rewritten after each page written."""

    def __init__(self, data_dir: Path, file: Path) -> None:
        self.path = _path(data_dir, file)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        self.record = ImportRecord(
            file=str(file.resolve()), started_at=now, pid=os.getpid(), host=socket.gethostname()
        )

    def written(self, line: int, points: int) -> None:
        """Points up to `line` are acknowledged by the engine."""
        self.record.line, self.record.points = line, self.record.points + points
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_durably(self.path, json.loads(self.record.model_dump_json()))

    def finished(self) -> None:
        """The whole file was read: nothing is left to finish."""
        self.path.unlink(missing_ok=True)
