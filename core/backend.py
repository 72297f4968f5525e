"""The seam between scoperag and a vector engine.

Profiles talk to a `VectorBackend`: a LlamaIndex vector store per collection for adding and
searching nodes, plus the few native operations LlamaIndex has no words for (scroll with order_by,
count, facet, delete by filter, payload indexes, collection metadata). Filters are always
`qdrant_client.models.Filter`; an engine that is not qdrant-client translates them in one place.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # kept out of start-up: the server lists its tools before any engine is opened
    from llama_index.core.vector_stores.types import BasePydanticVectorStore
    from qdrant_client import models

    from scoperag.core.generations import GenerationRegistry

DENSE_VECTOR = "text-dense"  # the vector name LlamaIndex's QdrantVectorStore reads and writes


class VectorBackend(ABC):
    """One vector engine holding every collection of the process."""

    name: str
    fresh_registry = False  # True where other processes may write (a server): no caching

    @cached_property
    def generations(self) -> GenerationRegistry:
        """Which points readers must not see while a source is being replaced (every read of
        `scroll`, `count`, `facet` and the vector store's `query` applies it)."""
        from scoperag.core.generations import GenerationRegistry

        return GenerationRegistry(self, fresh=self.fresh_registry)

    @abstractmethod
    def vector_store(self, collection: str) -> BasePydanticVectorStore:
        """LlamaIndex vector store over an existing collection."""

    @abstractmethod
    def list_collections(self) -> list[str]: ...

    @abstractmethod
    def collection_exists(self, collection: str) -> bool: ...

    @abstractmethod
    def create_collection(self, collection: str, dimension: int, metadata: dict[str, Any]) -> None:
        """Create an empty cosine collection with one dense vector named `DENSE_VECTOR`."""

    @abstractmethod
    def collection_metadata(self, collection: str) -> dict[str, Any]: ...

    @abstractmethod
    def update_collection_metadata(self, collection: str, changes: dict[str, Any]) -> None:
        """Set these top-level metadata keys in one atomic write (other keys stay)."""

    @abstractmethod
    def payload_indexes(self, collection: str) -> dict[str, str]:
        """Payload key -> index type of the indexes that exist."""

    @abstractmethod
    def create_index(self, collection: str, key: str, schema: models.PayloadSchemaType) -> None: ...

    @abstractmethod
    def delete(self, collection: str, flt: models.Filter) -> None: ...

    @abstractmethod
    def delete_collection(self, collection: str) -> None:
        """Remove a collection with its points, indexes and metadata."""

    @abstractmethod
    def scroll(
        self,
        collection: str,
        flt: models.Filter | None,
        limit: int,
        offset: int = 0,
        order_by: models.OrderBy | None = None,
    ) -> list[models.Record]:
        """Visible points matching `flt`, skipping `offset`, ordered by `order_by` (else by id)."""

    @abstractmethod
    def points(self, collection: str, batch_size: int = 512) -> Iterator[list[models.Record]]:
        """Every point (hidden ones too) with vectors and payload, a page at a time (migrations)."""

    @abstractmethod
    def count(self, collection: str, flt: models.Filter | None) -> int: ...

    @abstractmethod
    def facet(
        self, collection: str, key: str, flt: models.Filter | None, limit: int
    ) -> dict[Any, int]:
        """Value -> number of points, for a keyword/integer payload key."""

    @abstractmethod
    def set_payload(self, collection: str, point_id: int | str, payload: dict[str, Any]) -> None:
        """Set these payload keys of one point (other keys stay)."""

    @abstractmethod
    def upsert_points(self, collection: str, points: list[models.PointStruct]) -> None:
        """Write points as they are (vectors included), e.g. when migrating between engines."""

    @abstractmethod
    def close(self) -> None:
        """Release files and connections."""
