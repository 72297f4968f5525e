"""`Profile`: one profile of a `Store` — its tools as methods, and LlamaIndex components."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scoperag.server.python_api.methods import check_arguments, tool_method, tool_signature

if TYPE_CHECKING:
    from fastmcp.tools import Tool
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.llms import LLM
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.query_engine import RetrieverQueryEngine

    from scoperag.server.profiles.declaration import Profile as Declaration
    from scoperag.server.runtime import Runtime
    from scoperag.server.tool_session import ToolSession


class Profile:
    """The methods its declaration names (each the MCP tool of the same parameters), plus
    `retriever(**filters)` and `as_query_engine(llm=..., **filters)`."""

    def __init__(self, session: ToolSession, runtime: Runtime, declared: Declaration) -> None:
        self.name = declared.name
        self._declared = declared
        self._session = session
        self._runtime = runtime
        self._methods = declared.methods
        for method, tool in self._methods.items():
            setattr(self, method, tool_method(session.tools[tool], method, session.call))

    def __repr__(self) -> str:
        return f"<scoperag {self.name} profile: {', '.join(self._methods)}>"

    def retriever(self, *, top_k: int | None = None, **filters: Any) -> BaseRetriever:
        """A LlamaIndex retriever over the profile's search tool; its filters are the tool's
        parameters, checked now, and `top_k` how many hits it gives (default: the tool's)."""
        from scoperag.server.python_api.retrieval import ToolRetriever

        search = self._declared.retriever
        method = getattr(self, search.method)
        fixed = {**filters, **({search.top_k: top_k} if top_k is not None else {})}
        tool = self._tool(search.method)
        tool_signature(tool).bind_partial("query", **fixed)
        check_arguments(tool, {"query": "-", **fixed})
        return ToolRetriever(tool.name, lambda query: method(query, **fixed))

    def postprocessors(self) -> list[BaseNodePostprocessor]:
        """The node postprocessors the retriever's nodes need (none but a book's)."""
        return []

    def as_query_engine(self, *, llm: LLM | None = None, **filters: Any) -> RetrieverQueryEngine:
        """A LlamaIndex query engine over `retriever(**filters)`, answering with `llm` (any
        LlamaIndex LLM; default: LlamaIndex's `Settings.llm`)."""
        return query_engine(self.retriever(**filters), self.postprocessors(), llm)

    def _tool(self, method: str) -> Tool:
        return self._session.tools[self._methods[method]]


def query_engine(
    retriever: BaseRetriever, postprocessors: list[BaseNodePostprocessor], llm: LLM | None
) -> RetrieverQueryEngine:
    from llama_index.core.query_engine import RetrieverQueryEngine

    return RetrieverQueryEngine.from_args(retriever, llm=llm, node_postprocessors=postprocessors)
