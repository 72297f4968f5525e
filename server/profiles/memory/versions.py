"""memory profile: a memory as a line of versions (update, supersede, merge, history).

A new version is a new point: its `lineage` is the content hash of the line's first version,
its `version` the next number, and the versions it replaces get `superseded_by` (kept, hidden
from searches by default). Its hash is the sha256 of its text, as for every memory, unless a
stored memory has that text already (e.g. an update of tags only): then it is
`version_hash(text, lineage, version)`. Memories stored before versions existed have none of
these keys and read as current first versions.

The write is a compare-and-set (`write_if`) on the replaced versions being current, made where
the engine is (the owner process's write lock) while this data dir's writers take turns (the
order-key lock): of two writers replacing the same version, one wins and the other gets
`ConflictError` naming the memory and its current version, so a line never forks.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from qdrant_client import models

from scoperag.core.contracts.memory import (
    COLLECTION,
    CONTENT_HASH,
    LINEAGE,
    SUPERSEDED_BY,
    MemoryPayload,
    current_memories,
    memory_indexes,
    normalise_tags,
    parse_moment,
    rfc3339,
    version_hash,
)
from scoperag.core.engine.collections import prepare_for_writing
from scoperag.core.errors import ConflictError, InvalidParameterError
from scoperag.core.filters.fields import FilterableField, build_filter
from scoperag.pipelines.memories import existing_hashes, make_memory, memory_id, memory_point
from scoperag.pipelines.memory_order import assign_order, writers_take_turns
from scoperag.server.data_admin import HASH_SHOWN, UnknownIdError, stored_id
from scoperag.server.profiles.memory.models import (
    MemoryHistoryParams,
    MemoryHistoryResult,
    MergeMemoriesParams,
    UpdateMemoryParams,
    VersionResult,
    VersionRow,
)
from scoperag.server.runtime import Runtime

if TYPE_CHECKING:
    from scoperag.core.engine.backend import VectorBackend

MOST_VERSIONS = 10_000  # versions a history shows (the newest; it says how many are not)
PAGE = 1_000  # versions read at a time
LINES_FOLLOWED = 100  # merges followed from a version to the line that holds its successor
CHANGED = ("content", "tags", "memory_type", "metadata", "expires_at")


def _where(field: FilterableField, value: str) -> models.Filter:
    """The memories whose `field` is `value`, as the profile's filters build it."""
    found = build_filter([field], {field.name: value})
    assert found is not None  # a value is given
    return found


def _is_current(hash_: str) -> models.Filter:
    """The version with this hash, while nothing supersedes it (expired or not)."""
    unreplaced = current_memories(0.0, include_superseded=False, include_expired=True)
    found = build_filter([CONTENT_HASH], {CONTENT_HASH.name: hash_}, extra=unreplaced)
    assert found is not None
    return found


def _lineage(payload: dict[str, Any]) -> str:
    return payload.get("lineage") or payload["content_hash"]


def _written(payload: dict[str, Any]) -> tuple[float, int]:
    """When this version was written, then its order key (ties)."""
    moment = parse_moment(payload.get("updated_at") or payload["created_at"], "updated_at")
    return moment.timestamp(), payload.get("created_order", 0)


class MemoryVersions:
    """The version handlers of the memory profile over one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def stored(self, given: str) -> dict[str, Any]:
        """The payload of the memory `given` names: its hash or a unique prefix (as `scoperag
        delete memory` takes them); `UnknownIdError` if none or several."""
        runtime = self.runtime
        hash_ = stored_id(runtime.backend, runtime.settings, "memory", given.strip().lower())
        found = self._by_hash(hash_)
        if found is None:  # deleted since its hash was listed
            raise UnknownIdError("memory (content_hash)", given, [])
        return found

    def _by_hash(self, hash_: str) -> dict[str, Any] | None:
        flt = _where(CONTENT_HASH, hash_)
        found = self.runtime.backend.scroll(COLLECTION, flt, limit=1)
        return (found[0].payload or {}) if found else None

    def current(self, given: list[str]) -> list[dict[str, Any]]:
        """The memories named, each once; `ConflictError` if one is not current."""
        payloads = list({p["content_hash"]: p for p in map(self.stored, given)}.values())
        for payload in payloads:
            if payload.get("superseded_by"):
                raise self._conflict(payload)
        return payloads

    def _conflict(self, payload: dict[str, Any], raced: bool = False) -> ConflictError:
        """The error for a write based on `payload` that is not current, naming what replaced
        it and the line's current version; `raced`: it was current when the write began."""
        hash_ = payload["content_hash"]
        current = self._current_of_line(_lineage(payload))
        later = payload
        for _ in range(LINES_FOLLOWED):  # a merge carries a version into another line
            later = self._by_hash(later.get("superseded_by") or "") or {}
            if current or not later:
                break
            current = self._current_of_line(_lineage(later))
        if raced:
            happened = "another writer replaced it while this write was being made"
        else:
            happened = f"it is version {payload.get('version', 1)}, replaced by " + (
                f"{payload['superseded_by'][:HASH_SHOWN]}"
            )
        if not current:
            return ConflictError(
                f"Memory {hash_[:HASH_SHOWN]} is not current ({happened}), and no version of "
                "its line is current now: nothing was written."
            )
        names = ", ".join(f"{p.get('version', 1)} ({p['content_hash']})" for p in current)
        newest = current[0]["content_hash"]
        which = "version is" if len(current) == 1 else "versions are"
        return ConflictError(
            f"Memory {hash_[:HASH_SHOWN]} is not current: {happened}. Its current {which} "
            f"{names}; nothing was written. Read it (memory_history "
            f"{newest[:HASH_SHOWN]}) and apply the change to that version."
        )

    def _current_of_line(self, lineage: str) -> list[dict[str, Any]]:
        """The current versions of a line (one, or none after every version was deleted),
        newest first."""
        unreplaced = current_memories(0.0, include_superseded=False, include_expired=True)
        line = models.Filter(
            should=[_where(LINEAGE, lineage), _where(CONTENT_HASH, lineage)], must=unreplaced
        )
        found = self.runtime.backend.scroll(COLLECTION, line, limit=MOST_VERSIONS)
        return sorted((r.payload or {} for r in found), key=_written, reverse=True)

    def write(
        self, memory: MemoryPayload, replaced: list[dict[str, Any]], base: dict[str, Any]
    ) -> VersionResult:
        """Write `memory` as the next version of `base`'s line, superseding `replaced` (read
        current), in one compare-and-set; its created_at is the line's."""
        runtime = self.runtime
        backend, now = runtime.backend, datetime.now(UTC)
        lineage, version = _lineage(base), base.get("version", 1) + 1
        memory.lineage, memory.version, memory.updated_at = lineage, version, rfc3339(now)
        memory.created_at, memory.created_at_ts = base["created_at"], base["created_at_ts"]
        memory.supersedes = [payload["content_hash"] for payload in replaced]
        [vector] = runtime.embedder.embed_texts([memory.content])
        guard = models.Filter(should=[_is_current(hash_) for hash_ in memory.supersedes])
        with writers_take_turns(runtime.settings.data_dir):
            prepare_for_writing(backend, runtime.embedder, COLLECTION, memory_indexes())
            if existing_hashes(backend, [memory.content_hash]):  # another memory has this text
                memory.content_hash = version_hash(memory.content, lineage, version)
            assign_order(backend, [memory])
            point = memory_point(memory, vector, backend.has_keywords(COLLECTION))
            marks = {
                memory_id(p["content_hash"]): {
                    "superseded_by": memory.content_hash,
                    "lineage": _lineage(p),
                    "version": p.get("version", 1),
                }
                for p in replaced
            }
            try:
                backend.write_if(COLLECTION, guard, len(replaced), [point], marks)
            except ConflictError:
                if not self._landed(memory):  # else: a retry after the owner left, already made
                    lost = self.stored(self._lost(replaced))
                    raise self._conflict(lost, raced=True) from None
        return VersionResult(
            content_hash=memory.content_hash,
            version=version,
            supersedes=memory.supersedes,
            message=f"Stored version {version}; {len(replaced)} superseded (kept, hidden).",
        )

    def _landed(self, memory: MemoryPayload) -> bool:
        """Whether this very write is stored (each version it replaced points at it)."""
        marked = _where(SUPERSEDED_BY, memory.content_hash)
        replaced = self.runtime.backend.scroll(COLLECTION, marked, limit=MOST_VERSIONS)
        hashes = {(record.payload or {}).get("content_hash") for record in replaced}
        return hashes == set(memory.supersedes)

    def _lost(self, replaced: list[dict[str, Any]]) -> str:
        """The first replaced version another writer superseded meanwhile."""
        for payload in replaced:
            if not self.runtime.backend.count(COLLECTION, _is_current(payload["content_hash"])):
                return payload["content_hash"]
        return replaced[0]["content_hash"]

    def update(self, params: UpdateMemoryParams) -> VersionResult:
        """A new version of one current memory: what is given changes, the rest is kept."""
        [old] = self.current([params.content_hash])
        tags = old["tags"] if params.tags is None else normalise_tags(params.tags) or []
        expiry = old.get("expires_at") if params.expires_at is None else params.expires_at
        memory = make_memory(
            old["content"] if params.content is None else params.content,
            tags,
            old["memory_type"] if params.memory_type is None else params.memory_type,
            old["created_at"],
            old.get("metadata", {}) if params.metadata is None else params.metadata,
            expiry,
        )
        new = memory.model_dump(include=set(CHANGED))
        if new == {key: old.get(key) for key in CHANGED}:
            given = params.model_dump(include=set(CHANGED), exclude_none=True)
            raise InvalidParameterError(
                ", ".join(CHANGED), given, "at least one value that differs from the memory's"
            )
        return self.write(memory, [old], old)

    def supersede(self, memory: MemoryPayload, given: list[str]) -> VersionResult:
        """`memory` as the next version of the earliest created of the memories `given`,
        superseding them all."""
        replaced = self.current(given)
        return self.write(memory, replaced, min(replaced, key=_created))

    def merge(self, params: MergeMemoriesParams) -> VersionResult:
        """One memory in place of several: the given text or the newest member's, every tag,
        the newest member's type and metadata over the others', the earliest creation time."""
        members = self.current(params.content_hashes)
        if len(members) < 2:
            raise InvalidParameterError(
                "content_hashes", params.content_hashes, "two or more different memories"
            )
        newest = max(members, key=_written)
        metadata: dict[str, Any] = {}
        for member in sorted(members, key=_written):
            metadata |= member.get("metadata") or {}
        memory = make_memory(
            params.content or newest["content"],
            list(dict.fromkeys(tag for member in members for tag in member["tags"])),
            newest["memory_type"],
            None,
            metadata,
        )
        return self.write(memory, members, min(members, key=_created))

    def history(self, params: MemoryHistoryParams) -> MemoryHistoryResult:
        """The versions of the line of the memory named, oldest first: every one, read in
        pages, or the newest `MOST_VERSIONS` with a note saying how many are not shown."""
        payload = self.stored(params.content_hash)
        lineage = _lineage(payload)
        line = models.Filter(should=[_where(LINEAGE, lineage), _where(CONTENT_HASH, lineage)])
        payloads: list[dict[str, Any]] = []
        while page := self.runtime.backend.scroll(COLLECTION, line, PAGE, len(payloads)):
            payloads += [record.payload or {} for record in page]
            if len(page) < PAGE:
                break
        rows, unreadable = [], 0
        for stored in payloads:
            try:  # one unreadable version never breaks a history
                rows.append((stored.get("version", 1), _written(stored), VersionRow.of(stored)))
            except (ValidationError, ValueError, KeyError, TypeError):
                unreadable += 1
        rows.sort(key=lambda row: row[:2])
        shown = rows[-MOST_VERSIONS:]
        notes = []
        if len(shown) < len(rows):
            notes.append(
                f"the line has {len(rows)} versions: the newest {len(shown)} are shown, "
                f"the oldest {len(rows) - len(shown)} are not"
            )
        if unreadable:
            notes.append(f"{unreadable} versions could not be read; `scoperag check` lists them")
        return MemoryHistoryResult(
            content_hash=payload["content_hash"],
            versions=[row for *_, row in shown],
            total=len(payloads),
            note="; ".join(notes) or None,
        )


def _created(payload: dict[str, Any]) -> tuple[float, int]:
    return payload["created_at_ts"], payload.get("created_order", 0)


def delete_version(
    backend: VectorBackend, data_dir: Path, hash_: str, whole_line: bool = False
) -> int:
    """Delete the version `hash_` (or, `whole_line`, every version of its line); how many
    points went. The versions it replaced take its place (current again if it was current,
    else replaced by what replaced it), in one compare-and-set: none is left pointing at a
    version that is gone."""
    found = backend.scroll(COLLECTION, _where(CONTENT_HASH, hash_), limit=1)
    if not found:
        return 0
    payload = found[0].payload or {}
    if whole_line:
        lineage = _lineage(payload)
        line = models.Filter(should=[_where(LINEAGE, lineage), _where(CONTENT_HASH, lineage)])
        count = backend.count(COLLECTION, line)
        backend.delete(COLLECTION, line)
        return count
    successor = payload.get("superseded_by") or None
    replaced = backend.scroll(COLLECTION, _where(SUPERSEDED_BY, hash_), limit=MOST_VERSIONS)
    unreplaced = current_memories(0.0, include_superseded=False, include_expired=True)
    values = {CONTENT_HASH.name: hash_, SUPERSEDED_BY.name: successor}
    as_read = build_filter([CONTENT_HASH, SUPERSEDED_BY], values, () if successor else unreplaced)
    assert as_read is not None  # a hash is given
    guard = models.Filter(should=[as_read, _where(SUPERSEDED_BY, hash_)])
    marks = {record.id: {"superseded_by": successor} for record in replaced}
    gone = _where(CONTENT_HASH, hash_)
    with writers_take_turns(data_dir):
        try:
            backend.write_if(COLLECTION, guard, 1 + len(replaced), [], marks, gone)
        except ConflictError:
            raise ConflictError(
                f"Memory {hash_[:HASH_SHOWN]} changed while it was being deleted (a new "
                "version of its line was written): nothing was deleted. Try again."
            ) from None
    return 1
