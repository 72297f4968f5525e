"""`SentenceDedup`: overlapping chunks become passages in which every sentence appears once."""

from __future__ import annotations

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from scoperag.postprocessors.positions import node_run, run_node
from scoperag.postprocessors.sentence_runs import deduplicated


class SentenceDedup(BaseNodePostprocessor):
    """Each sentence once, in reading order.

    Sentences are keyed by (book_id, sid); runs of consecutive sentences of one chapter merge
    into one passage whose score is the best score among the chunks it came from.
    (`sentence_runs.deduplicated` over nodes.)
    """

    @classmethod
    def class_name(cls) -> str:
        return "SentenceDedup"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return [run_node(run) for run in deduplicated(node_run(scored) for scored in nodes)]
