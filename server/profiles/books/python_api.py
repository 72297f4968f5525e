"""The books profile in the Python API: its retriever is the spoiler-safe one at the reader's
saved position, with the postprocessors that cut at it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scoperag.core.errors import ScoperagError
from scoperag.server.python_api.handle import Profile, query_engine
from scoperag.server.python_api.methods import check_arguments, tool_signature

if TYPE_CHECKING:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.llms import LLM
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.query_engine import RetrieverQueryEngine


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
        return query_engine(retriever, _book_postprocessors(user_pos), llm)

    def _user_pos(self, book_id: str, reader: str | None) -> int:
        return reader_position(self.position(book_id, reader=reader))  # type: ignore[attr-defined]

    def _retriever(
        self, book_id: str, reader: str | None, top_k: int | None, user_pos: int
    ) -> BaseRetriever:
        from scoperag.retrievers.spoiler_safe import SpoilerSafeRetriever

        default = tool_signature(self._tool("search")).parameters["top_k"].default
        checked = {"book_id": book_id, "query": "-", "reader": reader}
        checked["top_k"] = default if top_k is None else top_k
        check_arguments(self._tool("search"), checked)
        runtime = self._runtime
        return SpoilerSafeRetriever(
            runtime.backend, runtime.embedder, book_id, user_pos, top_k=checked["top_k"]
        )


def _book_postprocessors(user_pos: int) -> list[BaseNodePostprocessor]:
    from scoperag.postprocessors.sentence_dedup import SentenceDedup
    from scoperag.postprocessors.spoiler_truncation import SpoilerTruncation

    return [SpoilerTruncation(user_pos=user_pos), SentenceDedup()]


def reader_position(position: Any) -> int:
    """The sentence id of a saved reading position (a `get_reading_position` result)."""
    if position.sid is None:
        raise ScoperagError(
            f"No reading position is saved for reader '{position.reader}' in "
            f"'{position.book_id}', so every sentence could be a spoiler. Set one first with "
            "store.books.set_position (sentence=, chapter= or quote=)."
        )
    return position.sid
