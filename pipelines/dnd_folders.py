"""Open5e fixture folders: which folders and files a path holds, and each folder's document."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from scoperag.core.config.ingest_limits import open_source
from scoperag.core.config.open_beneath import SourceRefusedError

DOCUMENT_FILE = "Document.json"


class DndRejectedError(Exception):
    """A folder, file or item that cannot be ingested, with the reason in words."""


@dataclass(frozen=True)
class DocumentInfo:
    """What `Document.json` says about the folder's document."""

    pk: object
    slug: str
    title: str


def read_document(folder: Path) -> DocumentInfo:
    """The folder's document (slug, title) from its Document.json."""
    try:
        with open_source(folder / DOCUMENT_FILE) as file:
            records = json.loads(file.read().decode("utf-8"))
        record = next(r for r in records if r.get("model") == "api.document")
        return DocumentInfo(record["pk"], str(record["fields"]["slug"]), record["fields"]["title"])
    except FileNotFoundError:
        raise DndRejectedError(f"{folder} has no {DOCUMENT_FILE}") from None
    except SourceRefusedError as exc:
        raise DndRejectedError(f"{folder / DOCUMENT_FILE}: not read, {exc}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DndRejectedError(f"{folder / DOCUMENT_FILE} is not readable JSON ({exc})") from None
    except (StopIteration, KeyError, TypeError, AttributeError) as exc:
        raise DndRejectedError(
            f"{folder / DOCUMENT_FILE} is not an Open5e document record ({exc!r})"
        ) from None


def fixture_files(path: Path) -> dict[Path, list[Path]]:
    """Folder -> its fixture files, for a document folder, a folder of them, or one file."""
    if path.is_file():
        return {path.parent: [path]}
    if (path / DOCUMENT_FILE).is_file():
        return {path: _fixtures(path)}
    folders = sorted(p.parent for p in path.glob(f"*/{DOCUMENT_FILE}"))
    if not folders:
        raise DndRejectedError(
            f"{path} is not an Open5e document folder: neither it nor a folder inside it has "
            f"a {DOCUMENT_FILE}"
        )
    # A folder of fixtures without a Document.json is kept, so that it is reported, not ignored.
    folders += [p.parent for p in path.glob("*/*.json") if not (p.parent / DOCUMENT_FILE).exists()]
    return {folder: _fixtures(folder) for folder in sorted(set(folders))}


def _fixtures(folder: Path) -> list[Path]:
    """The folder's fixture files: regular files only (a FIFO would block the reader)."""
    return sorted(p for p in folder.glob("*.json") if p.name != DOCUMENT_FILE and p.is_file())
