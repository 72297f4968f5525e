"""`SharedVectorStore`: a collection's LlamaIndex vector store on a `SharedBackend`.

Each call is one `store.*` operation of the owner's `Engine`, run where the engine is open.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    VectorStoreQuery,
    VectorStoreQueryResult,
)
from pydantic import PrivateAttr


class SharedVectorStore(BasePydanticVectorStore):
    """A collection's LlamaIndex vector store whose calls run where the engine is open."""

    stores_text: bool = True
    collection_name: str
    _call: Callable[..., Any] = PrivateAttr()

    def __init__(self, collection_name: str, call: Callable[..., Any]) -> None:
        super().__init__(collection_name=collection_name)
        self._call = call

    @classmethod
    def class_name(cls) -> str:
        return "SharedVectorStore"

    @property
    def client(self) -> Any:
        return None

    def _op(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._call(f"store.{name}", self.collection_name, *args, **kwargs)

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        return self._op("add", list(nodes), **add_kwargs)

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        return self._op("query", query, **kwargs)

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        self._op("delete", ref_doc_id, **delete_kwargs)

    def delete_nodes(
        self, node_ids: list[str] | None = None, filters: Any = None, **delete_kwargs: Any
    ) -> None:
        self._op("delete_nodes", node_ids, filters, **delete_kwargs)

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: Any = None, limit: int | None = None
    ) -> list[BaseNode]:
        return self._op("get_nodes", node_ids, filters, limit)

    def clear(self) -> None:
        self._op("clear")
