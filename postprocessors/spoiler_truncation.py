"""`SpoilerTruncation`: no sentence past the reader's position leaves a chunk."""

from __future__ import annotations

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import Field

from scoperag.postprocessors.positions import node_run, run_node
from scoperag.postprocessors.sentence_runs import spoiler_free


class SpoilerTruncation(BaseNodePostprocessor):
    """Keeps sentence k of a chunk (sid = pos_start + k) while sid <= user_pos, drops the rest.

    The kept sentences are joined again as the chunk's text; a chunk with none left is dropped.
    A node without `pos_start` / `sentences` metadata is an error, never passed through.
    (`sentence_runs.spoiler_free` over nodes.)
    """

    user_pos: int = Field(ge=0, description="Sentence id of the last sentence the reader has read.")

    @classmethod
    def class_name(cls) -> str:
        return "SpoilerTruncation"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        runs = [spoiler_free(node_run(scored), self.user_pos) for scored in nodes]
        return [run_node(run) for run in runs if run is not None]
