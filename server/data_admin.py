"""What the store holds, and removing part of it: behind `scoperag list` / `scoperag delete` and
the pdf profile's `qdrant-delete-document` tool.

Every count and every deletion is a Qdrant operation on a filter (facet, count, delete by
filter, drop collection): nothing scans the points in Python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, Field

from scoperag.core.contracts import books, dnd, docs, memory
from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.core.settings import Settings

if TYPE_CHECKING:  # the pdf profile imports this module when it lists its tools: keep it light
    from qdrant_client import models

    from scoperag.core.backend import VectorBackend

_ALL = 100_000  # facet limit meaning "every value"
_SHOWN = 20  # ids named in an error about an unknown one


class Target(NamedTuple):
    """A kind of thing `delete` removes: the profile, its collection and the key naming it."""

    profile: str
    key: str
    what: str


# kind given to `delete` -> what it names
TARGETS = {
    "pdf": Target("pdf", "document_id", "PDF document"),
    "book": Target("books", "book_id", "book"),
    "memory": Target("memory", "content_hash", "memory (content_hash)"),
    "tag": Target("memory", "tags", "memories tagged"),
    "docs": Target("docs", "doc_id", "docs document"),
    "dnd": Target("dnd", "document", "D&D document"),
}
KINDS = (*TARGETS, "collection")


def profile_collection(settings: Settings, profile: str) -> str:
    """The collection a profile writes."""
    fixed = {"books": books.COLLECTION, "memory": memory.COLLECTION}
    fixed |= {"dnd": dnd.COLLECTION, "docs": docs.COLLECTION}
    return settings.pdf_collection if profile == "pdf" else fixed[profile]


class ProfileData(BaseModel):
    profile: str
    collection: str
    exists: bool
    points: int = Field(default=0, description="Points (chunks, entries, memories) stored.")
    embedder: str | None = Field(default=None, description="The embedder that built it.")
    groups: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Grouping -> value -> points, e.g. documents."
    )


class StoreListing(BaseModel):
    data_dir: str
    backend: str
    collections: list[str] = Field(description="Every collection in the store.")
    profiles: list[ProfileData]


class DeleteReport(BaseModel):
    kind: str
    id: str
    collection: str
    points_deleted: int
    message: str


# profile -> grouping name -> payload key counted by a facet (the key has a payload index)
GROUPS = {
    "pdf": {"documents": "document_id"},
    "books": {"books": "book_id"},
    "memory": {"tags": "tags", "types": "memory_type"},
    "dnd": {"documents": "document"},
    "docs": {"documents": "doc_id"},
}
UNINDEXED = {"doc_id"}  # counted per value from the documents' first chunks instead


def _counts(backend: VectorBackend, collection: str, key: str) -> dict[str, int]:
    """Value -> points stored with it."""
    if key not in UNINDEXED:
        counts = backend.facet(collection, key, None, _ALL)
        return {str(k): n for k, n in sorted(counts.items()) if n}  # Edge keeps emptied values
    first_chunks = _equals("chunk_index", 0)
    values = {r.payload[key] for r in backend.scroll(collection, first_chunks, _ALL) if r.payload}
    return {str(v): backend.count(collection, _equals(key, v)) for v in sorted(values)}


def _equals(key: str, value: Any) -> models.Filter:
    """The filter `key == value` (for an array payload: any element equals it)."""
    from qdrant_client import models  # when a filter is built, not when tools are listed

    return models.Filter(
        must=[models.FieldCondition(key=key, match=models.MatchValue(value=value))]
    )


def describe_profile(backend: VectorBackend, settings: Settings, profile: str) -> ProfileData:
    collection = profile_collection(settings, profile)
    if not backend.collection_exists(collection):
        return ProfileData(profile=profile, collection=collection, exists=False)
    from scoperag.core.collections import stored_embedder

    info = stored_embedder(backend, collection)
    return ProfileData(
        profile=profile,
        collection=collection,
        exists=True,
        points=backend.count(collection, None),
        embedder=info.label() if info else None,
        groups={name: _counts(backend, collection, key) for name, key in GROUPS[profile].items()},
    )


def list_store(backend: VectorBackend, settings: Settings) -> StoreListing:
    """The store's collections and, for each enabled profile, what it holds."""
    return StoreListing(
        data_dir=str(settings.data_dir),
        backend=settings.effective_backend,
        collections=backend.list_collections(),
        profiles=[describe_profile(backend, settings, p) for p in settings.profiles],
    )


class UnknownIdError(ScoperagError):
    """A delete naming something the store does not hold."""

    def __init__(self, what: str, given: str, known: list[str]) -> None:
        shown = ", ".join(known[:_SHOWN]) + (
            f" ... ({len(known)} in all)" if len(known) > _SHOWN else ""
        )
        hint = f"Stored: {shown}." if known else "Nothing of that kind is stored."
        super().__init__(f"No {what} {given!r} is stored. {hint} See `scoperag list`.")


def planned_deletion(backend: VectorBackend, settings: Settings, kind: str, given: str) -> int:
    """How many points `delete kind given` removes; raises if there is nothing of that name."""
    if kind == "collection":
        if given not in GROUPS:
            raise InvalidParameterError("profile", given, ", ".join(GROUPS))
        collection = profile_collection(settings, given)
        if not backend.collection_exists(collection):
            raise UnknownIdError("collection", collection, backend.list_collections())
        return backend.count(collection, None)
    target = _target(kind)
    collection = profile_collection(settings, target.profile)
    exists = backend.collection_exists(collection)
    points = backend.count(collection, _equals(target.key, given)) if exists else 0
    if not points:
        known = list(_counts(backend, collection, target.key)) if exists else []
        raise UnknownIdError(target.what, given, known)
    return points


def delete(backend: VectorBackend, settings: Settings, kind: str, given: str) -> DeleteReport:
    """Delete what `kind` + `given` name (by a Qdrant filter, or the whole collection)."""
    points = planned_deletion(backend, settings, kind, given)
    if kind == "collection":
        collection = profile_collection(settings, given)
        backend.delete_collection(collection)
        message = f"Deleted collection {collection!r} of profile {given!r} ({points} points)."
    else:
        target = TARGETS[kind]
        collection = profile_collection(settings, target.profile)
        backend.delete(collection, _equals(target.key, given))
        message = f"Deleted {target.what} {given!r}: {points} points from {collection!r}."
    return DeleteReport(
        kind=kind, id=given, collection=collection, points_deleted=points, message=message
    )


def _target(kind: str) -> Target:
    if kind not in TARGETS:
        raise InvalidParameterError("kind", kind, ", ".join(KINDS))
    return TARGETS[kind]
