"""memory profile handlers: the work behind the tools declared in `server.profiles.memory.tools`."""

from __future__ import annotations

import logging
import re
import time
from typing import TYPE_CHECKING, Any

from fastmcp.tools import ToolResult
from pydantic import ValidationError

from scoperag.core.contracts import memory
from scoperag.core.contracts.memory import (
    COLLECTION,
    CONTENT_HASH,
    END_DATE,
    ORDER_KEY,
    START_DATE,
    TAGS,
    TIME_KEY,
    current_memories,
    normalise_tags,
)
from scoperag.core.errors import InvalidParameterError
from scoperag.core.filters.days import day_end
from scoperag.core.filters.fields import FieldType, FilterableField, build_filter, empty_selection
from scoperag.pipelines.memory_order import backfill_order, order_bound
from scoperag.retrievers.explain import explained
from scoperag.retrievers.named_dates import named_date
from scoperag.retrievers.ranked import RankedPage, ranked_page
from scoperag.retrievers.searches import BrowseSearch, HybridSearch, TextQuery
from scoperag.server.mcp.unknown_values import unknown_value_notes
from scoperag.server.profiles.memory.models import (
    DeleteMemoryParams,
    DeleteMemoryResult,
    MemoryRow,
    Mode,
    SearchOptions,
    SearchResult,
    StoreMemoryParams,
    StoreMemoryResult,
)
from scoperag.server.profiles.memory.toon_output import PageFigures, toon_result
from scoperag.server.results.hits import drop_names
from scoperag.server.results.shape import Scored, engine_figures
from scoperag.server.runtime import Runtime

MAX_RANKED = 1000  # ranked results stop at this many (the most similar)
EMPTY_HINT = (
    "No memories are stored yet: call store_memory, or run `scoperag ingest memory FILE.json` "
    "or call the ingest_memories tool."
)
_SHA256 = re.compile(r"[0-9a-f]{64}")


if TYPE_CHECKING:
    from qdrant_client.models import ScoredPoint

logger = logging.getLogger(__name__)
_SCORES = {*Scored.model_fields, "explain"}  # not from the payload
_ROW_KEYS = [key for key in MemoryRow.model_fields if key not in _SCORES]  # a row's payload


def _row(payload: dict[str, Any], hit: ScoredPoint | None = None) -> MemoryRow:
    """A memory as listed; a ranked hit adds its figures (4 decimals: the rows are read)."""
    row = MemoryRow.of(payload)
    return row if hit is None else row.model_copy(update=engine_figures(hit, digits=4))


def _rows(found: list[Any], ranked: bool) -> tuple[list[MemoryRow], list[str]]:
    """The rows of the points found (hits when `ranked`), leaving out, with a note and a
    warning, a stored payload that does not fit a memory: one record never breaks a search."""
    rows, unreadable = [], []
    for point in found:
        try:
            rows.append(_row(point.payload or {}, point if ranked else None))
        except ValidationError as exc:
            unreadable.append(str(point.id))
            logger.warning("memory point %s is not readable, left out: %s", point.id, exc)
    if not unreadable:
        return rows, []
    return rows, [
        f"{len(unreadable)} stored memories could not be read and were left out (points "
        f"{', '.join(unreadable[:5])}); `scoperag check` lists them"
    ]


def _floor_note(page: RankedPage, min_similarity: float) -> str | None:
    if not page.hidden or page.best_hidden is None:
        return None
    return (
        f"min_similarity {min_similarity} hid {page.hidden} more matching memories (best "
        f"similarity {page.best_hidden:.3f}); lower it to see them"
    )


class MemoryService:
    """The memory profile's handlers over one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._keys_checked = False  # every memory is written with its order key: check once

    def store(self, params: StoreMemoryParams) -> StoreMemoryResult:
        # the pipeline (LlamaIndex's ingestion) loads on the first write: a search never waits
        from scoperag.pipelines.memories import make_memory, store_memories

        memory = make_memory(
            params.content,
            params.tags,
            params.memory_type,
            None,
            params.metadata,
            params.expires_at,
        )
        replaced = normalise_tags(params.supersedes, "supersedes")  # [] or "": supersedes none
        if replaced:
            from scoperag.server.profiles.memory.versions import MemoryVersions

            written = MemoryVersions(self.runtime).supersede(memory, replaced)
            return StoreMemoryResult(stored=True, **written.model_dump())
        runtime = self.runtime
        report = store_memories(
            runtime.backend, runtime.embedder, [memory], data_dir=runtime.settings.data_dir
        )
        stored = bool(report.stored)
        message = "Stored." if stored else self._already_stored(memory.content_hash)
        return StoreMemoryResult(content_hash=memory.content_hash, stored=stored, message=message)

    def _already_stored(self, hash_: str) -> str:
        """What a store of text stored already says: "Already stored" only of a memory search
        finds; else why search hides it and how to make it current."""
        from scoperag.server.data_admin import HASH_SHOWN

        backend = self.runtime.backend
        shown = current_memories(time.time(), include_superseded=False, include_expired=False)
        if backend.count(COLLECTION, build_filter([CONTENT_HASH], {"content_hash": hash_}, shown)):
            return "Already stored (same content): nothing changed."
        [record] = backend.scroll(
            COLLECTION, build_filter([CONTENT_HASH], {"content_hash": hash_}), 1
        )
        payload = record.payload or {}
        if payload.get("superseded_by"):
            why = (
                f"it is version {payload.get('version', 1)} of a memory, replaced by "
                f"{payload['superseded_by'][:HASH_SHOWN]}"
            )
            fix = (
                f"to make this text current again, update the current version "
                f"(memory_history {hash_[:HASH_SHOWN]} shows it) with this content"
            )
        else:
            why = f"it expired at {payload.get('expires_at')}"
            fix = "update it with a later expires_at to show it again"
        return f"This text is stored, but search hides it: {why}. Nothing changed; {fix}."

    def delete(self, params: DeleteMemoryParams) -> DeleteMemoryResult:
        hash_ = params.content_hash.strip().lower()
        if not _SHA256.fullmatch(hash_):
            raise InvalidParameterError(
                "content_hash", params.content_hash, "the 64-character hex sha256 of a memory"
            )
        deleted = self._delete(hash_, params.whole_line)
        message = (
            f"Deleted {deleted} version{'s' if deleted > 1 else ''}."
            if deleted
            else "No memory has this content_hash; nothing deleted."
        )
        return DeleteMemoryResult(content_hash=hash_, deleted=bool(deleted), message=message)

    def _delete(self, hash_: str, whole_line: bool) -> int:
        """Delete the memory with this content hash (its line, if asked; no pipeline loaded),
        the version it replaced current again; how many versions went."""
        from scoperag.server.profiles.memory.versions import delete_version

        backend = self.runtime.backend
        if not backend.collection_exists(COLLECTION):
            return 0
        return delete_version(backend, self.runtime.settings.data_dir, hash_, whole_line)

    def search(self, params: SearchOptions) -> ToolResult:
        return toon_result(self.run_search(params))

    def run_search(self, params: SearchOptions) -> SearchResult:
        """The search as a model (what the `search` tool renders as TOON)."""
        given = _facet_values(params)
        query = params.query.strip()
        mode, notes = _effective_mode(params, given, query)
        ranked = bool(query) and mode != "tag"
        values = {name: value for name, value in given.items() if name in mode_facets(mode)}
        total, rows, search = 0, [], None
        if reason := _nothing_matches(values):
            notes.append(reason)
        else:
            flags = {name: getattr(params, name) for name in _flags()}
            flt = build_filter(memory.MEMORY_FILTERS, values | flags, now=time.time())
            offset = (params.page - 1) * params.page_size
            if ranked:
                search = HybridSearch(
                    self.runtime.backend,
                    self.runtime.embedder,
                    COLLECTION,
                    flt,
                    params.page_size,
                    offset,
                    with_payload=_ROW_KEYS,
                    explain=params.explain,
                )
                if params.date_boost:
                    search.date_boost = named_date(query, TIME_KEY)
                total, rows, more = self._ranked(search, query, params.min_similarity)
                notes += more
            elif self.runtime.backend.collection_exists(COLLECTION):
                end = values.get(END_DATE.name)
                before = None if end is None else day_end(end)
                total, rows, more = self._newest(flt, before, offset, params.page_size)
                notes += more
            else:
                notes.append(EMPTY_HINT)
            if ranked and total == MAX_RANKED:
                notes.append(f"ranked results stop at the {MAX_RANKED} most similar memories")
            if not total:  # a tag or type nothing has says so (asked only of an empty result)
                given_keys = {name: (name, values.get(name)) for name in ("tags", "memory_type")}
                notes += unknown_value_notes(self.runtime.backend, COLLECTION, given_keys)
        result = SearchResult(
            **PageFigures.of(params.page, params.page_size, total).model_dump(),
            mode=mode,
            order="relevance" if ranked else "newest",
            note="; ".join(notes) or None,
            memories=rows,
        )
        if params.explain and search is not None and search.last is not None:
            names = drop_names("search", self.runtime.backend, COLLECTION)
            flt, offset, boost = search.qdrant_filter, search.offset, search.date_boost
            shown = {row.content_hash for row in rows}  # less any point that could not be read
            hits = [h for h in search.last.hits if (h.payload or {}).get("content_hash") in shown]
            found = search.last.model_copy(update={"hits": hits})
            return explained(result, rows, found, flt, offset, boost, names)
        return result

    def _ranked(
        self, search: HybridSearch, query: str, min_similarity: float
    ) -> tuple[int, list[MemoryRow], list[str]]:
        """A page ranked by meaning and keywords above the floor, and notes on what it hid."""
        page = ranked_page(search, TextQuery(query), min_similarity, MAX_RANKED)
        if not page.exists:
            return 0, [], [EMPTY_HINT]
        notes = [note for note in (_floor_note(page, min_similarity), search.keyword_hint())]
        rows, unreadable = _rows(page.hits, ranked=True)
        return page.total, rows, [note for note in notes if note] + unreadable

    def _newest(
        self, flt: Any, before: float | None, offset: int, size: int
    ) -> tuple[int, list[MemoryRow], list[str]]:
        """A page newest first; `before` (the date window's end) is where the order starts;
        notes on what could not be read."""
        backend = self.runtime.backend
        if not self._keys_checked:  # memories an older version stored without an order key
            backfill_order(backend, self.runtime.settings.data_dir)
            self._keys_checked = True
        start = None if before is None else order_bound(before)
        browse = BrowseSearch(backend, COLLECTION, ORDER_KEY, flt, offset, size, start)
        total = browse.total()
        records = browse.records() if offset < total else []
        rows, unreadable = _rows(records, ranked=False)
        return total, rows, unreadable


def _effective_mode(
    params: SearchOptions, given: dict[str, Any], query: str
) -> tuple[Mode, list[str]]:
    """The mode that runs, with notes on a fallback and on what that mode does not use."""
    mode: Mode = params.mode
    notes = []
    if mode == "faceted" and not given:
        mode = "hybrid"
        notes.append("no facet given, so this ran as a hybrid search")
    if mode == "tag" and given.get("tags") is None:
        raise InvalidParameterError(
            "tags", params.tags, "one or more tags when mode='tag' (or choose another mode)"
        )
    ignored = [name for name in given if name not in mode_facets(mode)]
    if query and mode == "tag":
        ignored.insert(0, "query")
    if ignored:
        notes.append(f"not used by mode '{mode}': {', '.join(ignored)} (mode 'faceted' uses all)")
    return mode, notes


def _facets() -> list[FilterableField]:
    """The memory filters that take a value (the others are flags: `include_...`)."""
    return [field for field in memory.MEMORY_FILTERS if not field.hides]


def _flags() -> list[str]:
    """The boolean parameters of the memory filters: match_all, include_superseded, ..."""
    found = [field.name for field in memory.MEMORY_FILTERS if field.hides]
    return found + [field.all_flag for field in memory.MEMORY_FILTERS if field.all_flag]


def mode_facets(mode: Mode) -> list[str]:
    """The facets a mode applies (a facet given to a mode that does not use it is named in
    the note): faceted every one, tag the tags and the days, hybrid every one but the days."""
    names = [field.name for field in _facets()]
    days = [field.name for field in _facets() if field.field_type is FieldType.DAY]
    if mode == "tag":
        return [TAGS.name, *days]
    if mode == "hybrid":
        return [name for name in names if name not in days]
    return names


def _facet_values(params: SearchOptions) -> dict[str, Any]:
    """The facets given (tags listed once each; days as `date`s, the type's reading)."""
    values = {field.name: getattr(params, field.name) for field in _facets()}
    values[TAGS.name] = normalise_tags(values[TAGS.name])
    return {name: value for name, value in values.items() if value is not None}


def _nothing_matches(values: dict[str, Any]) -> str | None:
    """Why no memory can match these facet values (an empty tag list, dates the wrong way round)."""
    if reason := empty_selection(memory.MEMORY_FILTERS, values):
        return reason
    start, end = values.get(START_DATE.name), values.get(END_DATE.name)
    if start is not None and end is not None and start > end:
        return "start_date is after end_date, so no day is in the range"
    return None
