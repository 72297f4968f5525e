"""What the store holds, and removing part of it: behind `scoperag list` / `scoperag delete` and
the pdf profile's `qdrant-delete-document` tool.

Every count and every deletion is a Qdrant operation on a filter (facet, count, delete by
filter, drop collection): nothing scans the points in Python.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, Field

from scoperag.core.config.chunking import METADATA_KEY as CHUNKING_KEY
from scoperag.core.config.settings import Settings
from scoperag.core.errors import InvalidParameterError, ScoperagError, as_json
from scoperag.server.profiles import declaration, declarations, resolve_profile
from scoperag.server.profiles.declaration import Profile

if TYPE_CHECKING:  # the pdf profile imports this module when it lists its tools: keep it light
    from qdrant_client import models

    from scoperag.core.engine.backend import VectorBackend

_ALL = 100_000  # facet limit meaning "every value"
_SHOWN = 20  # ids named in an error about an unknown one
_MATCHES = 5  # stored hashes named when a prefix matches several
HASH_SHOWN = 12  # characters of a content hash shown (a unique prefix `delete` accepts)


class Target(NamedTuple):
    """A kind of thing `delete` removes: the profile, its collection and the key naming it."""

    profile: str
    key: str
    what: str
    by_prefix: bool
    deleter: str


def _targets() -> dict[str, Target]:
    """Kind given to `delete` -> what it names, as each profile declares its kinds."""
    return {
        kind: Target(profile.name, *target)
        for profile in declarations()
        for kind, target in profile.deletes.items()
    }


def _collections(settings: Settings) -> dict[str, str]:
    """Profile -> the collection it writes."""
    return {profile.name: profile.collection(settings) for profile in declarations()}


def _profile(settings: Settings, given: str) -> str:
    """The profile `given` names: a profile, its collection or an older spelling."""
    collections = _collections(settings)
    profile = resolve_profile(given, collections)
    if profile is None:
        accepted = f"{', '.join(collections)} (or a collection: {', '.join(collections.values())})"
        raise InvalidParameterError("profile", given, accepted)
    return profile


class ProfileData(BaseModel):
    profile: str
    collection: str
    exists: bool
    points: int = Field(default=0, description="Points (chunks, entries, memories) stored.")
    embedder: str | None = Field(default=None, description="The embedder that built it.")
    chunking: dict[str, Any] | None = Field(
        default=None, description="The chunking its latest ingestion recorded (pdf, docs, books)."
    )
    groups: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Grouping -> value -> points, e.g. documents."
    )
    hashes: dict[str, str] | None = Field(
        default=None, description="Memories only, when asked: content_hash -> first words."
    )
    states: dict[str, int] = Field(
        default_factory=dict, description="Points by state, e.g. memories current, superseded."
    )


class StoreListing(BaseModel):
    data_dir: str
    backend: str
    collections: list[str] = Field(description="Every collection in the store.")
    profiles: list[ProfileData]
    stopped_imports: list[str] = Field(
        default_factory=list, description="Imports that stopped before the end of their file."
    )


class DeleteReport(BaseModel):
    kind: str
    id: str
    collection: str
    points_deleted: int
    message: str


def _counts(backend: VectorBackend, profile: Profile, collection: str, key: str) -> dict[str, int]:
    """Value -> points stored with it: a facet on an indexed key; an unindexed one is counted
    per value read from the documents' first chunks."""
    if key not in profile.unindexed:
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


def _hashes(backend: VectorBackend, collection: str, keys: tuple[str, str]) -> dict[str, str]:
    """Each item's id (`keys[0]`) -> its first words (of `keys[1]`), for every stored item."""
    id_key, text_key = keys
    shown = {
        row.payload[id_key]: " ".join(str(row.payload.get(text_key, "")).split()[:12])
        for row in backend.scroll(collection, None, _ALL)
        if row.payload
    }
    return dict(sorted(shown.items()))


def describe_profile(
    backend: VectorBackend, settings: Settings, profile: str, hashes: bool = False
) -> ProfileData:
    declared = declaration(profile)
    collection = declared.collection(settings)
    if not backend.collection_exists(collection):
        return ProfileData(profile=profile, collection=collection, exists=False)
    from scoperag.core.engine.collection_embedder import stored_embedder

    info = stored_embedder(backend, collection)
    return ProfileData(
        profile=profile,
        collection=collection,
        exists=True,
        points=backend.count(collection, None),
        embedder=info.label() if info else None,
        chunking=backend.collection_metadata(collection).get(CHUNKING_KEY),
        groups={
            name: _counts(backend, declared, collection, key)
            for name, key in declared.groups.items()
        },
        hashes=_hashes(backend, collection, declared.hashes)
        if hashes and declared.hashes
        else None,
        states=_states(backend, declared, collection),
    )


def _states(backend: VectorBackend, declared: Profile, collection: str) -> dict[str, int]:
    """The profile's points by state, where it declares states."""
    if declared.states is None:
        return {}
    module, _, name = declared.states.partition(":")
    return getattr(importlib.import_module(module), name)(backend, collection)


def list_store(
    backend: VectorBackend,
    settings: Settings,
    profiles: list[str] | None = None,
    hashes: bool = False,
) -> StoreListing:
    """The store's collections and, for each enabled profile (or each of `profiles`, by any
    spelling), what it holds; `hashes` adds each memory's content hash."""
    chosen = [_profile(settings, p) for p in profiles] if profiles else settings.profiles
    from scoperag.server.transfer.unfinished import stopped_imports

    chosen = [profile.name for profile in declarations(chosen)]
    return StoreListing(
        data_dir=str(settings.data_dir),
        backend=settings.effective_backend,
        collections=backend.list_collections(),
        profiles=[describe_profile(backend, settings, p, hashes) for p in chosen],
        stopped_imports=[record.message() for record in stopped_imports(settings.data_dir)],
    )


class UnknownIdError(ScoperagError):
    """A delete naming something the store does not hold (or, by a prefix, several)."""

    def __init__(self, what: str, given: str, known: list[str], several: bool = False) -> None:
        most = _MATCHES if several else _SHOWN
        shown = ", ".join(known[:most]) + (
            f" ... ({len(known)} in all)" if len(known) > most else ""
        )
        if several:
            message = (
                f"{len(known)} {what} start with {as_json(given)}: {shown}. Give more characters."
            )
        else:
            hint = f"Stored: {shown}." if known else "Nothing of that kind is stored."
            message = f"No {what} {as_json(given)} is stored. {hint} See `scoperag list`."
        super().__init__(message)


class Deletion(NamedTuple):
    """What `delete kind given` removes: the stored id it names and how many points."""

    kind: str
    id: str
    points: int


def planned_deletion(backend: VectorBackend, settings: Settings, kind: str, given: str) -> Deletion:
    """What `delete kind given` removes; raises if there is nothing of that name.

    `kind` and a collection's name may be spelled any way a profile is; a memory may be named
    by a unique prefix of its content hash.
    """
    if kind == "collection":
        profile = _profile(settings, given)
        collection = declaration(profile).collection(settings)
        if not backend.collection_exists(collection):
            raise UnknownIdError("collection", collection, backend.list_collections())
        return Deletion(kind, profile, backend.count(collection, None))
    kind, target = _target(settings, kind)
    declared = declaration(target.profile)
    collection = declared.collection(settings)
    exists = backend.collection_exists(collection)
    points = backend.count(collection, _equals(target.key, given)) if exists else 0
    if points:
        return Deletion(kind, given, points)
    if exists and target.by_prefix:
        return _by_prefix(backend, collection, kind, target, given)
    known = list(_counts(backend, declared, collection, target.key)) if exists else []
    raise UnknownIdError(target.what, given, known)


def stored_id(backend: VectorBackend, settings: Settings, kind: str, given: str) -> str:
    """The stored id `given` names for `kind`: itself, or the one id it is a unique prefix
    of where the kind allows; `UnknownIdError` if none or several."""
    return planned_deletion(backend, settings, kind, given).id


def _by_prefix(
    backend: VectorBackend, collection: str, kind: str, target: Target, given: str
) -> Deletion:
    """The stored id (a memory's content hash) that starts with `given`, if exactly one does."""
    stored = sorted(str(value) for value in backend.key_values(collection, target.key))
    matches = [value for value in stored if given and value.startswith(given)]
    if len(matches) == 1:
        return Deletion(
            kind, matches[0], backend.count(collection, _equals(target.key, matches[0]))
        )
    short = [value[:HASH_SHOWN] for value in (matches or stored)]
    raise UnknownIdError(target.what, given, short, several=len(matches) > 1)


def delete(
    backend: VectorBackend, settings: Settings, kind: str, given: str, whole_line: bool = False
) -> DeleteReport:
    """Delete what `kind` + `given` name: by a Qdrant filter, the whole collection, or the
    profile's declared `deleter` (a memory version, or its whole line if asked)."""
    kind, given, points = planned_deletion(backend, settings, kind, given)
    deleter = "" if kind == "collection" else _targets()[kind].deleter
    if whole_line and not deleter:
        raise InvalidParameterError("whole_line", whole_line, "false for a " + kind)
    if kind == "collection":
        collection = declaration(given).collection(settings)
        backend.delete_collection(collection)
        message = f"Deleted collection {collection!r} of profile {given!r} ({points} points)."
    else:
        target = _targets()[kind]
        collection = declaration(target.profile).collection(settings)
        if deleter:  # the profile's own way (a memory version: the one it replaced returns)
            module, _, name = deleter.partition(":")
            delete_own = getattr(importlib.import_module(module), name)
            points = delete_own(backend, settings.data_dir, given, whole_line)
        else:
            backend.delete(collection, _equals(target.key, given))
        message = f"Deleted {target.what} {given!r}: {points} points from {collection!r}."
    return DeleteReport(
        kind=kind, id=given, collection=collection, points_deleted=points, message=message
    )


def _target(settings: Settings, kind: str) -> tuple[str, Target]:
    """The kind `kind` names (a profile by any spelling, or `tag`) and what it deletes."""
    targets = _targets()
    if kind not in targets:
        kind = resolve_profile(kind, _collections(settings)) or kind
    if kind not in targets:
        raise InvalidParameterError("kind", kind, ", ".join((*targets, "collection")))
    return kind, targets[kind]
