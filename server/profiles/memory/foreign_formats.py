"""Other memory servers' exports: read into the memory profile (`scoperag import FILE`, the
format detected from the content) and written from it (`scoperag export memory FILE --format
mcp-memory-service`). Each memory keeps its text, tags, type, creation and update times; every
memory is written by the memory pipeline (`store_memories`), so an exact duplicate of a stored
one is skipped and counted.

- `mcp-memory-service`: `{"export_metadata": {...}, "memories": [{"content", "content_hash",
  "tags", "created_at", "updated_at", "memory_type", "metadata"}, ...]}` (times as Unix seconds,
  or `created_at_iso` / `updated_at_iso` text);
- `mem0`: a JSON array (or `{"results": [...]}`) of `{"memory" | "text" | "content", "user_id",
  "agent_id", "run_id", "actor_id", "categories", "role", "metadata", "created_at",
  "updated_at"}`; the user, agent, run and actor become the tags `user:ID`, `agent:ID`,
  `run:ID`, `actor:ID`, the categories tags too;
- `mcp-server-memory`: the MCP reference memory server's `memory.json`, JSON Lines of entities
  `{"type": "entity", "name", "entityType", "observations": [...]}` (one memory per observation,
  tagged with the entity's name and type) and relations `{"type": "relation", "from", "to",
  "relationType"}` (one memory each: "FROM RELATION TO", tagged with both ends).

Where a format defines a list (tags, categories, observations), one value given alone is one
item. Each field found that is not kept is named in the report's `dropped`, with why.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import partial
from typing import IO, TYPE_CHECKING, Any

from scoperag.core.contracts.memory import MemoryPayload, parse_moment, rfc3339
from scoperag.core.errors import ScoperagError
from scoperag.core.progress import Progress
from scoperag.pipelines.memories import make_memory, store_memories

if TYPE_CHECKING:
    from qdrant_client import models

    from scoperag.core.engine.backend import VectorBackend
    from scoperag.server.runtime import Runtime
    from scoperag.server.transfer.reports import ImportReport

Item = tuple[str, Callable[[], MemoryPayload]]  # where it is in the file, how to build it
SERVICE, MEM0, GRAPH = "mcp-memory-service", "mem0", "mcp-server-memory"
FORMATS = (SERVICE, MEM0, GRAPH)
_MEM0_TEXT = ("memory", "text", "content")


def _memory(
    content: object,
    tags: Any,
    memory_type: Any,
    created: object,
    updated: object,
    metadata: Any,
) -> MemoryPayload:
    memory = make_memory(content, tags, memory_type, created, metadata)  # type: ignore[arg-type]
    if updated is None:
        return memory
    memory.updated_at = rfc3339(parse_moment(updated, "updated_at"))
    return memory


def _first(item: dict[str, Any], *keys: str) -> Any:
    return next((item[key] for key in keys if item.get(key) is not None), None)


def _whole(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _mem0_items(data: Any) -> Any:
    return data.get("results") if isinstance(data, dict) else data


def detect(text: str) -> str | None:
    """Which of `FORMATS` the text is in, if any."""
    data = _whole(text)
    if isinstance(data, dict) and "export_metadata" in data and isinstance(data["memories"], list):
        return SERVICE
    items = _mem0_items(data)
    head = items[0] if isinstance(items, list) and items else None
    if isinstance(head, dict) and any(key in head for key in _MEM0_TEXT):
        return MEM0
    first = _whole(next((line for line in text.splitlines() if line.strip()), ""))
    if isinstance(first, dict) and first.get("type") in ("entity", "relation"):
        return GRAPH
    return None


# The fields each format defines that are not kept, and why (any other field is named too).
DROPPED = {
    SERVICE: {
        "content_hash": "scoperag keys a memory by the sha256 of its text, computed again",
        "embedding": "the text is embedded again with this store's embedder",
    },
    MEM0: {
        "hash": "mem0's hash of the text; scoperag keys a memory by its sha256",
        "score": "a search's score, not part of the memory",
        "immutable": "scoperag keeps every memory's versions",
        "expiration_date": "not read: set expires_at with update_memory",
    },
}
MAPPED = {
    SERVICE: {"content", "tags", "memory_type", "metadata"}
    | {"created_at", "created_at_iso", "updated_at", "updated_at_iso"},
    MEM0: {*_MEM0_TEXT, "id", "user_id", "agent_id", "run_id", "actor_id", "role", "categories"}
    | {"metadata", "memory_type", "created_at", "updated_at"},
    GRAPH: {"type", "name", "entityType", "observations", "from", "to", "relationType"},
}


def _as_list(value: Any) -> list[Any]:
    """A list the format defines, where one item may be given alone (a string: one item)."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _note_dropped(format: str, item: dict[str, Any], report: ImportReport) -> None:
    """Name in `report` each field of `item` that is not kept."""
    for key in sorted(set(item) - MAPPED[format]):
        if key not in report.dropped:
            reasons = DROPPED.get(format, {})
            report.dropped[key] = reasons.get(key, f"not a field scoperag maps from {format}")


def _service(text: str, report: ImportReport) -> Iterator[Item]:
    for index, item in enumerate(json.loads(text)["memories"]):
        if not isinstance(item, dict):
            yield f"memory {index}", partial(_refuse, "not a JSON object")
            continue
        _note_dropped(SERVICE, item, report)
        yield (
            f"memory {index}",
            partial(
                _memory,
                item.get("content"),
                item.get("tags"),
                item.get("memory_type"),
                _first(item, "created_at_iso", "created_at"),
                _first(item, "updated_at_iso", "updated_at"),
                item.get("metadata"),
            ),
        )


def _mem0(text: str, report: ImportReport) -> Iterator[Item]:
    for index, item in enumerate(_mem0_items(json.loads(text))):
        if not isinstance(item, dict):
            yield f"memory {index}", partial(_refuse, "not a JSON object")
            continue
        _note_dropped(MEM0, item, report)
        owners = {kind: item.get(f"{kind}_id") for kind in ("user", "agent", "run", "actor")}
        tags = [f"{kind}:{owner}" for kind, owner in owners.items() if owner is not None]
        metadata = item.get("metadata")
        kept = {"mem0_id": item.get("id"), "role": item.get("role")}
        if metadata is None or isinstance(metadata, dict):
            given = {key: value for key, value in kept.items() if value is not None}
            metadata = {**(metadata or {}), **given}
        yield (
            f"memory {index}",
            partial(
                _memory,
                _first(item, *_MEM0_TEXT),
                [*tags, *_as_list(item.get("categories"))],
                item.get("memory_type"),
                item.get("created_at"),
                item.get("updated_at"),
                metadata,
            ),
        )


def _graph(text: str, report: ImportReport) -> Iterator[Item]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = _whole(line)
        kind = record.get("type") if isinstance(record, dict) else None
        if kind in ("entity", "relation"):
            _note_dropped(GRAPH, record, report)
        if kind == "entity":
            name, entity_type = record.get("name"), record.get("entityType")
            about = {"entity": name, "entity_type": entity_type}
            for observation in _as_list(record.get("observations")):
                build = partial(
                    _memory, observation, [name, entity_type], "observation", None, None, about
                )
                yield f"line {number}", build
        elif kind == "relation":
            ends, relation = [record.get("from"), record.get("to")], record.get("relationType")
            content = f"{ends[0]} {relation} {ends[1]}"
            about = {"from": ends[0], "to": ends[1], "relation_type": relation}
            yield f"line {number}", partial(_memory, content, ends, "relation", None, None, about)
        else:
            yield f"line {number}", partial(_refuse, "not an entity or a relation")


def _refuse(reason: str) -> MemoryPayload:
    raise ScoperagError(reason)


READERS: dict[str, Callable[[str, ImportReport], Iterator[Item]]] = {
    SERVICE: _service,
    MEM0: _mem0,
    GRAPH: _graph,
}


def import_text(
    runtime: Runtime, format: str, text: str, report: ImportReport, progress: Progress | None
) -> None:
    """Store every memory of `text` (in `format`), counting duplicates and refusals in
    `report`."""
    memories = []
    for where, build in READERS[format](text, report):
        try:
            memories.append(build())
        except (ScoperagError, ValueError, TypeError) as exc:
            report.refuse(f"{where}: {exc}")
    if memories:
        stored = store_memories(
            runtime.backend,
            runtime.embedder,
            memories,
            progress,
            data_dir=runtime.settings.data_dir,
        )
        report.imported, report.duplicates = len(stored.stored), len(stored.duplicates)


def _service_memory(payload: dict[str, Any]) -> dict[str, Any]:
    created = parse_moment(payload["created_at"])
    updated = parse_moment(payload.get("updated_at") or payload["created_at"], "updated_at")
    return {
        "content": payload["content"],
        "content_hash": payload["content_hash"],
        "tags": payload.get("tags") or [],
        "memory_type": payload.get("memory_type"),
        "metadata": payload.get("metadata") or {},
        "created_at": created.timestamp(),
        "created_at_iso": rfc3339(created),
        "updated_at": updated.timestamp(),
        "updated_at_iso": rfc3339(updated),
    }


def write_service(
    backend: VectorBackend,
    collection: str,
    pages: Iterator[list[models.Record]],
    file: IO[str],
    progress: Progress | None,
) -> int:
    """The memories in mcp-memory-service's export format, written as they are read."""
    total = backend.count(collection, None)
    head = {
        "source_machine": socket.gethostname(),
        "export_timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "total_memories": total,
        "include_embeddings": False,
        "exporter": "scoperag",
    }
    file.write(f'{{"export_metadata": {json.dumps(head)}, "memories": [')
    written = 0
    for page in pages:
        for record in page:
            memory = json.dumps(_service_memory(record.payload or {}), ensure_ascii=False)
            file.write(("," if written else "") + "\n" + memory)
            written += 1
        if progress:
            progress(written, max(total, written))
    file.write("\n]}\n")
    return written


EXPORTS = {SERVICE: write_service}
