"""The operations every vector engine gives scoperag, in qdrant-client's types.

Filters, orders, points and hits are `qdrant_client.models`: the qdrant-client engines take them
as they are, Qdrant Edge translates them in `core.engine.edge.conversion`. What is built on
these operations (the generation registry, LlamaIndex's vector store) takes an
`EngineOperations`; the engines themselves are `core.engine.backend.VectorBackend`s.

Each operation is declared once, here, with `@operation`: whether it reads or writes, and the
shape of its result. From that declaration the owner of an embedded store knows which calls to
run in parallel and which alone (`core.engine.sharing.dispatch`), and `implemented` writes the
methods of an engine that only passes operations on (an attached process's, an Edge
collection's) with this protocol's signatures and docstrings.
"""

from __future__ import annotations

import abc
import functools
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # kept out of start-up: the server lists its tools before any engine is opened
    from qdrant_client import models

    from scoperag.core.engine.search_request import SearchRequest, SearchResult


_CHECK_AND_WRITE = threading.Lock()  # `write_if` in this process: one check-and-write at a time
T = TypeVar("T", bound=type)
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Operation:
    """What the protocol declares of one operation: whether it `writes`, and `returns`, the
    type its result is given back as where it crossed a process as a list (None: as it came)."""

    writes: bool
    returns: Callable[[Any], Any] | None = None


def operation(
    writes: bool = False, returns: Callable[[Any], Any] | None = None
) -> Callable[[F], F]:
    """Declare a protocol method an operation (a read unless `writes`)."""

    def declare(method: F) -> F:
        method.operation = Operation(writes, returns)  # type: ignore[attr-defined]
        return method

    return declare


def operations(protocol: type) -> dict[str, Operation]:
    """Name -> declaration of every operation of `protocol` (its bases' included)."""
    found: dict[str, Operation] = {}
    for cls in reversed(protocol.__mro__):
        for name, member in vars(cls).items():
            if isinstance(getattr(member, "operation", None), Operation):
                found[name] = member.operation
    return found


def implemented(
    protocol: type,
    run: Callable[[Any, str, tuple[Any, ...], dict[str, Any]], Any],
    names: Iterable[str] | None = None,
) -> Callable[[T], T]:
    """A class decorator: every operation of `protocol` (or those of `names`) the class does
    not define itself becomes a method, with the protocol's signature and docstring, returning
    `run(self, name, args, kwargs)` (given back as the declared `returns` type)."""

    def write(cls: T) -> T:
        declared_ops = operations(protocol)
        for name in declared_ops if names is None else names:
            declared = declared_ops[name]
            if name not in vars(cls):
                setattr(cls, name, _method(getattr(protocol, name), name, declared, run))
        abc.update_abstractmethods(cls)
        return cls

    return write


def _method(
    prototype: Callable[..., Any],
    name: str,
    declared: Operation,
    run: Callable[[Any, str, tuple[Any, ...], dict[str, Any]], Any],
) -> Callable[..., Any]:
    returns = declared.returns

    @functools.wraps(prototype)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = run(self, name, args, kwargs)
        return result if returns is None else returns(result)

    method.__isabstractmethod__ = False  # type: ignore[attr-defined]
    return method


class EngineOperations(ABC):
    """One vector engine's operations on every collection of the process."""

    name: str

    @operation()
    @abstractmethod
    def list_collections(self) -> list[str]: ...

    @operation()
    @abstractmethod
    def has_keywords(self, collection: str) -> bool:
        """Whether the collection keeps BM25 sparse vectors (`SPARSE_VECTOR`) beside the dense."""

    @operation(writes=True)
    @abstractmethod
    def add_keywords(self, collection: str) -> int:
        """Give a collection built before hybrid search its BM25 vectors, without re-embedding.

        The points are copied with their dense vectors and payloads into a collection that
        keeps BM25 vectors (computed from each point's text), which then replaces the old one;
        readers see the old collection or the new one, never half of one. Returns the points
        copied (0 when the collection already keeps BM25 vectors).
        """

    @operation()
    @abstractmethod
    def search(self, request: SearchRequest) -> SearchResult:
        """The request's page: visible points matching its filter, best first, each scored by
        its cosine similarity to `dense`, in one engine operation.

        A collection that does not exist gives no hits (`exists` False); one built with another
        embedder than `request.embedder` raises `EmbedderMismatchError`. Only points whose
        cosine is at least `score_threshold` are candidates. With `text` on a collection that
        keeps BM25 vectors (`keywords`), the order is the engine's distribution-based score
        fusion (DBSF: each ranking's scores normalised by their spread, then summed) of the
        dense ranking and the BM25 ranking of `text` over those same candidates (two
        prefetches, the filter and the floor in both), so keywords reorder what meaning found
        and never bring in a point below the floor; otherwise it is the dense ranking. `offset`
        skips that many. With `count_cap`, `count` is the number of candidates up to that cap
        (on Qdrant Edge one ids-only query gives both the count and the page's candidates).
        A fused hit's `order_value` is its fusion score (see `order_score`).
        """

    @operation()
    @abstractmethod
    def neighbours(
        self, collection: str, flt: models.Filter | None, threshold: float, limit: int
    ) -> list[tuple[int | str, int | str, float]]:
        """Pairs of distinct visible points matching `flt` whose cosine is at least `threshold`,
        each pair once, as (id, id, cosine), found by the engine: one batch of nearest-neighbour
        queries under `flt`, each by a point's stored vector, keeping each point's `limit`
        nearest such neighbours. No pairs when the collection does not exist."""

    @operation()
    @abstractmethod
    def collection_exists(self, collection: str) -> bool: ...

    @operation(writes=True)
    @abstractmethod
    def create_collection(self, collection: str, dimension: int, metadata: dict[str, Any]) -> None:
        """Create an empty collection: a cosine `DENSE_VECTOR` and BM25 `SPARSE_VECTOR`s."""

    @operation()
    @abstractmethod
    def collection_metadata(self, collection: str) -> dict[str, Any]: ...

    @operation(writes=True)
    @abstractmethod
    def update_collection_metadata(self, collection: str, changes: dict[str, Any]) -> None:
        """Set these top-level metadata keys in one atomic write (other keys stay)."""

    @operation()
    @abstractmethod
    def payload_indexes(self, collection: str) -> dict[str, str]:
        """Payload key -> index type of the indexes that exist."""

    @operation(writes=True)
    @abstractmethod
    def create_index(self, collection: str, key: str, schema: str) -> None:
        """A payload index of type `schema` (qdrant-client's `PayloadSchemaType` values)."""

    @operation(writes=True)
    @abstractmethod
    def delete(self, collection: str, flt: models.Filter) -> None: ...

    @operation(writes=True)
    @abstractmethod
    def delete_collection(self, collection: str) -> None:
        """Remove a collection with its points, indexes and metadata."""

    @operation()
    @abstractmethod
    def scroll(
        self,
        collection: str,
        flt: models.Filter | None,
        limit: int,
        offset: int = 0,
        order_by: models.OrderBy | None = None,
        with_vectors: bool = False,
    ) -> list[models.Record]:
        """Visible points matching `flt`, skipping `offset`, ordered by `order_by` (else by id),
        with their vectors if asked."""

    @operation(returns=iter)
    @abstractmethod
    def points(self, collection: str, batch_size: int = 512) -> Iterator[list[models.Record]]:
        """Every point (hidden ones too) with vectors and payload, a page at a time (migrations)."""

    @operation(returns=tuple)
    @abstractmethod
    def points_page(
        self, collection: str, cursor: int | str | None, limit: int
    ) -> tuple[list[models.Record], int | str | None]:
        """Up to `limit` visible points from `cursor` on (None: the first), in id order, with
        vectors and payload, and the cursor of the next page (None after the last): a whole
        collection read in pages of one call each, whichever process owns the engine."""

    @operation()
    @abstractmethod
    def count(self, collection: str, flt: models.Filter | None) -> int: ...

    @operation()
    @abstractmethod
    def facet(
        self, collection: str, key: str, flt: models.Filter | None, limit: int
    ) -> dict[Any, int]:
        """Value -> number of points, for a keyword/integer payload key."""

    @operation()
    @abstractmethod
    def key_values(self, collection: str, key: str) -> list[Any]:
        """Every value the index of `key` holds: candidates to narrow with `facet` or `count`.

        May list values of hidden or deleted points (never fewer than the visible ones); an
        in-process engine keeps the list until the collection's next write.
        """

    @operation(writes=True)
    @abstractmethod
    def set_payload(self, collection: str, point_id: int | str, payload: dict[str, Any]) -> None:
        """Set these payload keys of one point (other keys stay)."""

    @operation(writes=True)
    @abstractmethod
    def upsert_points(self, collection: str, points: list[models.PointStruct]) -> None:
        """Write points as they are (vectors included), e.g. when migrating between engines.

        A point without BM25 vectors gets them from its text when the collection keeps them.
        """

    @operation(writes=True)
    def write_if(
        self,
        collection: str,
        guard: models.Filter,
        expected: int,
        points: list[models.PointStruct],
        payloads: dict[str, dict[str, Any]],
        delete: models.Filter | None = None,
    ) -> None:
        """Compare and set: if exactly `expected` visible points match `guard`, write `points`
        (as `upsert_points`), then set each id's `payloads` keys (as `set_payload`), then
        delete the points matching `delete` if given; else raise `ConflictError` and write
        nothing.

        Check and write are one step under one lock of this process: for every writer of an
        embedded store, as they all reach its engine through the owner process (where this
        runs, under its write lock too). A Qdrant server's other clients are not held by it.
        The points go first: a crash between the two leaves the old points as they were, never
        a payload naming a point that is not there."""
        from scoperag.core.errors import ConflictError

        with _CHECK_AND_WRITE:
            found = self.count(collection, guard)
            if found != expected:
                raise ConflictError(
                    f"{found} points of '{collection}' match the write's guard where {expected} "
                    "were expected: they changed meanwhile, so nothing was written."
                )
            if points:
                self.upsert_points(collection, points)
            for point_id, payload in payloads.items():
                self.set_payload(collection, point_id, payload)
            if delete is not None:
                self.delete(collection, delete)

    @operation(writes=True)
    def accept_loss(self, collection: str) -> int:
        """Serve a collection again after `LostWritesError` (its ledger counted more points than
        its shard holds), keeping what it holds; its point count. Qdrant Edge alone keeps a
        ledger: elsewhere this is refused."""
        from scoperag.core.errors import ScoperagError

        raise ScoperagError(f"accept_loss is for the edge engine; this store is {self.name}.")

    @abstractmethod
    def close(self) -> None:
        """Release files and connections."""
