"""`SentenceDedup`: overlapping chunks become passages in which every sentence appears once."""

from __future__ import annotations

from dataclasses import dataclass, field

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle

from scoperag.postprocessors.positions import numbered_sentences, with_sentences


@dataclass
class _Passage:
    """Consecutive sentences of one chapter, scored by the best chunk they came from."""

    source: BaseNode
    first_sid: int
    sentences: list[str] = field(default_factory=list)
    score: float | None = None


def _chapter_key(node: BaseNode) -> tuple[object, object]:
    return node.metadata.get("book_id"), node.metadata.get("chapter")


class SentenceDedup(BaseNodePostprocessor):
    """Each sentence once, in reading order.

    Sentences are keyed by (book_id, sid); runs of consecutive sentences of one chapter merge
    into one passage whose score is the best score among the chunks it came from.
    """

    @classmethod
    def class_name(cls) -> str:
        return "SentenceDedup"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        found: dict[tuple[str, int], tuple[str, NodeWithScore]] = {}
        for scored in nodes:
            book = str(scored.node.metadata.get("book_id", ""))
            for sid, text in numbered_sentences(scored.node):
                earlier = found.get((book, sid))
                if earlier is None or (scored.score or 0.0) > (earlier[1].score or 0.0):
                    found[(book, sid)] = (text, scored)
        passages: list[_Passage] = []
        for (_, sid), (text, scored) in sorted(found.items()):
            last = passages[-1] if passages else None
            if not (
                last
                and sid == last.first_sid + len(last.sentences)
                and _chapter_key(last.source) == _chapter_key(scored.node)
            ):
                last = _Passage(source=scored.node, first_sid=sid)
                passages.append(last)
            last.sentences.append(text)
            if scored.score is not None:
                last.score = max(last.score or scored.score, scored.score)
        return [
            NodeWithScore(
                node=with_sentences(passage.source, passage.first_sid, passage.sentences),
                score=passage.score,
            )
            for passage in passages
        ]
