"""A book chunk's node as a `SentenceRun`, and a run back as a copy of its node."""

from __future__ import annotations

from llama_index.core.schema import BaseNode, NodeWithScore

from scoperag.postprocessors.sentence_runs import SentenceRun, chunk_run


def node_run(scored: NodeWithScore) -> SentenceRun[BaseNode]:
    """The sentences of a scored chunk, with its score (an error without positions)."""
    node = scored.node
    return chunk_run(node, node.metadata, scored.score, node.node_id)


def run_node(run: SentenceRun[BaseNode]) -> NodeWithScore:
    """A copy of the run's source node whose text and metadata hold just the run's sentences."""
    node = run.source
    metadata = {**node.metadata, "pos_start": run.first_sid, "pos_end": run.last_sid}
    metadata["sentences"] = list(run.sentences)
    # a shallow copy with metadata of its own: nothing else of a chunk changes (a deep copy of
    # every chunk was most of a book search's own time)
    copy = node.model_copy(
        update={"id_": f"{node.node_id}:{run.first_sid}-{run.last_sid}", "metadata": metadata}
    )
    copy.set_content(" ".join(run.sentences))
    return NodeWithScore(node=copy, score=run.score)
