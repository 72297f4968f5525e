"""Required payload indexes of every enabled profile: report them, create them, gate on them."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field, computed_field

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.registry import required_indexes
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.collections import ensure_indexes, missing_indexes
from scoperag.core.errors import ScoperagError
from scoperag.core.filters.fields import FilterableField, index_plan

# Engines that keep no payload indexes: qdrant-client's local mode scans every point instead.
SCANNING_ENGINES = {"local"}


class CollectionIndexes(BaseModel):
    """The required indexes of one collection and which of them exist."""

    collection: str
    exists: bool = Field(description="False until the collection's first write creates it.")
    required: dict[str, str] = Field(description="Payload key -> index type it needs.")
    missing: list[str] = Field(default_factory=list, description="Required keys with no index.")
    wrong_type: dict[str, str] = Field(
        default_factory=dict, description="Keys indexed with another type -> the type they have."
    )
    created: list[str] = Field(default_factory=list, description="Keys `ensure` just indexed.")

    @computed_field
    @property
    def ready(self) -> bool:
        return not self.missing and not self.wrong_type


class IndexReport(BaseModel):
    """Index readiness of every enabled profile's collection on one engine."""

    backend: str
    payload_indexes: bool = Field(
        description="False on an engine that keeps no indexes (local mode scans every point)."
    )
    collections: list[CollectionIndexes]

    @computed_field
    @property
    def ready(self) -> bool:
        return all(status.ready for status in self.collections)


class IndexesMissingError(ScoperagError):
    """Filtered traffic refused: the server lacks payload indexes the contract requires."""

    def __init__(self, collection: str, missing: list[str]) -> None:
        self.collection = collection
        self.missing = missing
        super().__init__(
            f"Collection '{collection}' on the Qdrant server is missing the required payload "
            f"index(es) {', '.join(missing)}, so filtered searches are refused. Run "
            "`scoperag indexes ensure` with SCOPERAG_QDRANT_URL set to this server to create them."
        )

    def details(self) -> dict[str, object]:
        return {"missing": self.missing}


def collection_indexes(
    backend: VectorBackend, collection: str, fields: Iterable[FilterableField]
) -> CollectionIndexes:
    """Which of the collection's required indexes exist (none are checked if it does not)."""
    plan = index_plan(fields)
    exists = backend.collection_exists(collection)
    if not exists or backend.name in SCANNING_ENGINES:
        return CollectionIndexes(collection=collection, exists=exists, required=plan)
    existing = backend.payload_indexes(collection)
    return CollectionIndexes(
        collection=collection,
        exists=True,
        required=plan,
        missing=[key for key in plan if key not in existing],
        wrong_type={
            key: existing[key] for key, kind in plan.items() if existing.get(key, kind) != kind
        },
    )


def index_report(backend: VectorBackend, settings: Settings) -> IndexReport:
    """`scoperag indexes check` and the readiness endpoint: every enabled profile's collection."""
    return _report(
        backend,
        [
            collection_indexes(backend, collection, fields)
            for collection, fields in required_indexes(settings).items()
        ],
    )


def ensure_required(backend: VectorBackend, settings: Settings) -> IndexReport:
    """`scoperag indexes ensure`: create the missing indexes of every existing collection."""
    statuses = []
    for collection, fields in required_indexes(settings).items():
        created = []
        if backend.collection_exists(collection) and backend.name not in SCANNING_ENGINES:
            created = ensure_indexes(backend, collection, fields)
        status = collection_indexes(backend, collection, fields)
        status.created = created
        statuses.append(status)
    return _report(backend, statuses)


def _report(backend: VectorBackend, statuses: list[CollectionIndexes]) -> IndexReport:
    return IndexReport(
        backend=backend.name,
        payload_indexes=backend.name not in SCANNING_ENGINES,
        collections=statuses,
    )


def refuse_unindexed(
    backend: VectorBackend, collection: str, fields: Iterable[FilterableField]
) -> None:
    """On a Qdrant server, raise `IndexesMissingError` while a required index of an existing
    collection is missing.

    Embedded engines create their indexes with the collection and are left alone; a server may
    hold a collection that another tool created, and unindexed filters there scan everything.
    """
    if backend.name != "server" or not backend.collection_exists(collection):
        return
    missing = missing_indexes(backend, collection, fields)
    if missing:
        raise IndexesMissingError(collection, missing)
