"""The sentences of a book chunk with their ids, and chunk copies that hold fewer of them."""

from __future__ import annotations

from llama_index.core.schema import BaseNode


def numbered_sentences(node: BaseNode) -> list[tuple[int, str]]:
    """(sid, sentence) pairs of a chunk: sentence k has sid `pos_start + k`."""
    meta = node.metadata
    if not isinstance(meta.get("pos_start"), int) or not isinstance(meta.get("sentences"), list):
        raise ValueError(
            f"Node {node.node_id} has no 'pos_start' and 'sentences' metadata; spoiler "
            "truncation and sentence dedup work on chunks of the books collection."
        )
    return [(meta["pos_start"] + k, sentence) for k, sentence in enumerate(meta["sentences"])]


def with_sentences(node: BaseNode, first_sid: int, sentences: list[str]) -> BaseNode:
    """A copy of `node` whose text and metadata hold just `sentences`, from sid `first_sid`."""
    last_sid = first_sid + len(sentences) - 1
    metadata = {**node.metadata, "pos_start": first_sid, "pos_end": last_sid}
    metadata["sentences"] = list(sentences)
    # a shallow copy with metadata of its own: nothing else of a chunk changes (a deep copy of
    # every chunk was most of a book search's own time)
    copy = node.model_copy(
        update={"id_": f"{node.node_id}:{first_sid}-{last_sid}", "metadata": metadata}
    )
    copy.set_content(" ".join(sentences))
    return copy
