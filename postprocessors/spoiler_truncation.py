"""`SpoilerTruncation`: no sentence past the reader's position leaves a chunk."""

from __future__ import annotations

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import Field

from scoperag.postprocessors.positions import numbered_sentences, with_sentences


class SpoilerTruncation(BaseNodePostprocessor):
    """Keeps sentence k of a chunk (sid = pos_start + k) while sid <= user_pos, drops the rest.

    The kept sentences are joined again as the chunk's text; a chunk with none left is dropped.
    A node without `pos_start` / `sentences` metadata is an error, never passed through.
    """

    user_pos: int = Field(ge=0, description="Sentence id of the last sentence the reader has read.")

    @classmethod
    def class_name(cls) -> str:
        return "SpoilerTruncation"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        kept = []
        for scored in nodes:
            sentences = numbered_sentences(scored.node)
            allowed = [text for sid, text in sentences if sid <= self.user_pos]
            if allowed:
                node = with_sentences(scored.node, sentences[0][0], allowed)
                kept.append(NodeWithScore(node=node, score=scored.score))
        return kept
