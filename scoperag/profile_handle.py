"""`Profile`: one profile of a `Store` — its tools as methods, and LlamaIndex components."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scoperag.server.profiles import declaration
from scoperag.tool_methods import check_arguments, tool_method, tool_signature

if TYPE_CHECKING:
    from fastmcp.tools import Tool
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.llms import LLM
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.query_engine import RetrieverQueryEngine

    from scoperag.store import Store


class Profile:
    """The methods its declaration names (each the MCP tool of the same parameters), plus
    `retriever(**filters)` and `as_query_engine(llm=..., **filters)`."""

    def __init__(self, store: Store, name: str) -> None:
        self.name = name
        self._store = store
        self._methods = declaration(name).methods
        tools = store._session.tools
        for method, tool in self._methods.items():
            setattr(self, method, tool_method(tools[tool], method, store._session.call))

    def __repr__(self) -> str:
        return f"<scoperag {self.name} profile: {', '.join(self._methods)}>"

    def retriever(self, *, top_k: int | None = None, **filters: Any) -> BaseRetriever:
        """A LlamaIndex retriever over the profile's search tool; its filters are the tool's
        parameters, checked now, and `top_k` how many hits it gives (default: the tool's)."""
        from scoperag.retrieval import ToolRetriever

        search = declaration(self.name).retriever
        method = getattr(self, search.method)
        fixed = {**filters, **({search.top_k: top_k} if top_k is not None else {})}
        tool = self._tool(search.method)
        tool_signature(tool).bind_partial("query", **fixed)
        check_arguments(tool, {"query": "-", **fixed})
        return ToolRetriever(lambda query: method(query, **fixed))

    def postprocessors(self) -> list[BaseNodePostprocessor]:
        """The node postprocessors the retriever's nodes need (none but a book's)."""
        return []

    def as_query_engine(self, *, llm: LLM | None = None, **filters: Any) -> RetrieverQueryEngine:
        """A LlamaIndex query engine over `retriever(**filters)`, answering with `llm` (any
        LlamaIndex LLM; default: LlamaIndex's `Settings.llm`)."""
        return _engine(self.retriever(**filters), self.postprocessors(), llm)

    def _tool(self, method: str) -> Tool:
        return self._store._session.tools[self._methods[method]]


class BookProfile(Profile):
    """The books profile: its retriever is the spoiler-safe one at the reader's position."""

    def retriever(  # type: ignore[override]
        self, book_id: str, reader: str | None = None, top_k: int | None = None
    ) -> BaseRetriever:
        """Chunks of `book_id` that start at or before the reader's saved position (read once,
        now); a chunk may run past it: put `postprocessors(book_id, reader)` after it."""
        return self._retriever(book_id, reader, top_k, self._user_pos(book_id, reader))

    def postprocessors(  # type: ignore[override]
        self, book_id: str, reader: str | None = None
    ) -> list[BaseNodePostprocessor]:
        """The cut at the reader's position and the merge of overlapping chunks."""
        return _book_postprocessors(self._user_pos(book_id, reader))

    def as_query_engine(  # type: ignore[override]
        self,
        book_id: str,
        reader: str | None = None,
        top_k: int | None = None,
        *,
        llm: LLM | None = None,
    ) -> RetrieverQueryEngine:
        """The spoiler-safe retriever and its postprocessors, at one reading of the position."""
        user_pos = self._user_pos(book_id, reader)
        retriever = self._retriever(book_id, reader, top_k, user_pos)
        return _engine(retriever, _book_postprocessors(user_pos), llm)

    def _user_pos(self, book_id: str, reader: str | None) -> int:
        from scoperag.retrieval import reader_position

        return reader_position(self.position(book_id, reader=reader))  # type: ignore[attr-defined]

    def _retriever(
        self, book_id: str, reader: str | None, top_k: int | None, user_pos: int
    ) -> BaseRetriever:
        from scoperag.retrievers.spoiler_safe import SpoilerSafeRetriever

        default = tool_signature(self._tool("search")).parameters["top_k"].default
        checked = {"book_id": book_id, "query": "-", "reader": reader}
        checked["top_k"] = default if top_k is None else top_k
        check_arguments(self._tool("search"), checked)
        runtime = self._store.runtime
        return SpoilerSafeRetriever(
            runtime.backend, runtime.embedder, book_id, user_pos, top_k=checked["top_k"]
        )


def _book_postprocessors(user_pos: int) -> list[BaseNodePostprocessor]:
    from scoperag.postprocessors.sentence_dedup import SentenceDedup
    from scoperag.postprocessors.spoiler_truncation import SpoilerTruncation

    return [SpoilerTruncation(user_pos=user_pos), SentenceDedup()]


def _engine(
    retriever: BaseRetriever, postprocessors: list[BaseNodePostprocessor], llm: LLM | None
) -> RetrieverQueryEngine:
    from llama_index.core.query_engine import RetrieverQueryEngine

    return RetrieverQueryEngine.from_args(retriever, llm=llm, node_postprocessors=postprocessors)
