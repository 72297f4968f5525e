"""Spoiler truncation and sentence de-duplication on a book's chunks, without LlamaIndex.

A chunk of the books collection holds `pos_start` and its `sentences` in its metadata (and its
payload): sentence k has the sentence id (sid) `pos_start + k`. `search_book` runs these
functions on the engine's hits, so a launched server's first book search does not import
LlamaIndex; `SpoilerTruncation` and `SentenceDedup` are the same functions over
LlamaIndex nodes (`postprocessors/positions.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

Source = TypeVar("Source")


@dataclass(slots=True)
class SentenceRun(Generic[Source]):
    """Consecutive sentences of one chapter, from sid `first_sid`, taken from `source`.

    `source` is the chunk the run came from (a node, a point) and `metadata` its metadata;
    `score` is the best score of the chunks its sentences came from.
    """

    source: Source
    metadata: Mapping[str, Any]
    first_sid: int
    sentences: list[str]
    score: float | None

    @property
    def last_sid(self) -> int:
        return self.first_sid + len(self.sentences) - 1


def chunk_run(
    source: Source, metadata: Mapping[str, Any], score: float | None, chunk_id: str
) -> SentenceRun[Source]:
    """A chunk's sentences as a run; a chunk without positions is an error, never passed on."""
    if not isinstance(metadata.get("pos_start"), int) or not isinstance(
        metadata.get("sentences"), list
    ):
        raise ValueError(
            f"Node {chunk_id} has no 'pos_start' and 'sentences' metadata; spoiler "
            "truncation and sentence dedup work on chunks of the books collection."
        )
    return SentenceRun(source, metadata, metadata["pos_start"], list(metadata["sentences"]), score)


def spoiler_free(run: SentenceRun[Source], user_pos: int) -> SentenceRun[Source] | None:
    """The run's sentences up to sid `user_pos`; None when the run starts past it."""
    kept = run.sentences[: max(0, user_pos - run.first_sid + 1)]
    return replace(run, sentences=kept) if kept else None


def _chapter(run: SentenceRun[Any]) -> tuple[object, object]:
    return run.metadata.get("book_id"), run.metadata.get("chapter")


def sentence_sources(
    runs: Iterable[SentenceRun[Source]],
) -> dict[tuple[str, int], tuple[str, SentenceRun[Source]]]:
    """Each sentence, keyed by (book_id, sid): its text and the best-scored run holding it
    (the first of equal ones)."""
    found: dict[tuple[str, int], tuple[str, SentenceRun[Source]]] = {}
    for run in runs:
        book = str(run.metadata.get("book_id", ""))
        for sid, text in enumerate(run.sentences, start=run.first_sid):
            earlier = found.get((book, sid))
            if earlier is None or (run.score or 0.0) > (earlier[1].score or 0.0):
                found[(book, sid)] = (text, run)
    return found


def deduplicated(runs: Iterable[SentenceRun[Source]]) -> list[SentenceRun[Source]]:
    """Each sentence once, in reading order, merged into runs of one chapter.

    Sentences are keyed by (book_id, sid) and taken from the best-scored run that holds them
    (`sentence_sources`); a merged run is scored by the best run it took a sentence from and
    keeps the source of its first sentence.
    """
    found = sentence_sources(runs)
    merged: list[SentenceRun[Source]] = []
    for (_, sid), (text, run) in sorted(found.items(), key=lambda item: item[0]):
        last = merged[-1] if merged else None
        if not (last and sid == last.last_sid + 1 and _chapter(last) == _chapter(run)):
            last = SentenceRun(run.source, run.metadata, sid, [], None)
            merged.append(last)
        last.sentences.append(text)
        if run.score is not None:
            last.score = run.score if last.score is None else max(last.score, run.score)
    return merged
