"""`Profile`: one profile of a `Store` — its tools as methods, and LlamaIndex components."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scoperag.profiles_api import METHODS, RETRIEVERS
from scoperag.tool_methods import tool_method, tool_signature

if TYPE_CHECKING:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.llms import LLM
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.query_engine import RetrieverQueryEngine

    from scoperag.store import Store


class Profile:
    """The methods of `METHODS[name]` (each the MCP tool of the same parameters), plus
    `retriever(**filters)` and `as_query_engine(llm=..., **filters)`."""

    def __init__(self, store: Store, name: str) -> None:
        self.name = name
        self._store = store
        tools = store._session.tools
        for method, tool in METHODS[name].items():
            setattr(self, method, tool_method(tools[tool], method, store._session.call))

    def __repr__(self) -> str:
        return f"<scoperag {self.name} profile: {', '.join(METHODS[self.name])}>"

    def retriever(self, *args: Any, top_k: int | None = None, **filters: Any) -> BaseRetriever:
        """A LlamaIndex retriever whose filters are the search tool's parameters (books: the
        book and reader, whose saved position bounds every chunk; see `postprocessors`)."""
        if self.name == "books":
            return self._book_retriever(*args, top_k=top_k, **filters)
        from scoperag.retrieval import ToolRetriever

        if args:
            raise TypeError(f"{self.name}.retriever takes its filters as keyword arguments")
        search = RETRIEVERS[self.name]
        method = getattr(self, search.method)
        fixed = {**filters, **({search.top_k: top_k} if top_k is not None else {})}
        tool_signature(self._tool(search.method)).bind_partial("query", **fixed)
        return ToolRetriever(lambda query: method(query, **fixed))

    def postprocessors(self, *args: Any, **position: Any) -> list[BaseNodePostprocessor]:
        """The node postprocessors a retriever's nodes need: for a book, the cut at the
        reader's position and the merge of overlapping chunks; none elsewhere."""
        if self.name != "books":
            return []
        from scoperag.postprocessors.sentence_dedup import SentenceDedup
        from scoperag.postprocessors.spoiler_truncation import SpoilerTruncation

        return [SpoilerTruncation(user_pos=self._user_pos(*args, **position)), SentenceDedup()]

    def as_query_engine(
        self, *args: Any, llm: LLM | None = None, **filters: Any
    ) -> RetrieverQueryEngine:
        """A LlamaIndex query engine over `retriever(*args, **filters)` and `postprocessors`,
        answering with `llm` (default: LlamaIndex's `Settings.llm`)."""
        from llama_index.core.query_engine import RetrieverQueryEngine

        position = {k: v for k, v in filters.items() if k == "reader"}
        return RetrieverQueryEngine.from_args(
            self.retriever(*args, **filters),
            llm=llm,
            node_postprocessors=self.postprocessors(*args, **position),
        )

    def _tool(self, method: str) -> Any:
        return self._store._session.tools[METHODS[self.name][method]]

    def _user_pos(self, book_id: str, reader: str | None = None) -> int:
        from scoperag.retrieval import reader_position

        return reader_position(self.position(book_id, reader=reader))  # type: ignore[attr-defined]

    def _book_retriever(
        self, book_id: str, reader: str | None = None, top_k: int | None = None
    ) -> BaseRetriever:
        from scoperag.retrievers.spoiler_safe import SpoilerSafeRetriever

        runtime = self._store.runtime
        user_pos = self._user_pos(book_id, reader)
        default = tool_signature(self._tool("search")).parameters["top_k"].default
        return SpoilerSafeRetriever(
            runtime.backend, runtime.embedder, book_id, user_pos, top_k=top_k or default
        )
