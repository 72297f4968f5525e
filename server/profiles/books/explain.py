"""`search_book`'s explain: each passage's best chunk in the engine's rankings, and the chunks
the spoiler gate cut, de-duplication merged away or the limit left out."""

from __future__ import annotations

from qdrant_client import models

from scoperag.core.engine.search_request import SearchResult
from scoperag.postprocessors.sentence_runs import SentenceRun, sentence_sources
from scoperag.retrievers.explain import Dropped, Explainer, Names
from scoperag.server.profiles.books.models import Passage, SearchBookResult

Run = SentenceRun[models.ScoredPoint]


def explain_book_search(
    result: SearchBookResult,
    found: SearchResult,
    flt: models.Filter | None,
    hits: list[Run],
    kept: list[Run],
    user_pos: int,
    names: Names,
) -> SearchBookResult:
    """`result` with explain: a passage is explained by the best-scored chunk it took a
    sentence from (its score is the passage's)."""
    why = Explainer(found, flt, names=names)
    sources = sentence_sources(kept)
    for rank, passage in enumerate(result.passages, 1):
        best = _best_source(passage, sources)
        passage.explain = why.hit(best.source.id, rank, passage)
    for hit in hits:
        if hit.last_sid > user_pos:
            cut = f"{max(hit.first_sid, user_pos + 1)}-{hit.last_sid}"
            reason = f"sentences {cut} are past the reader's position {user_pos}: cut"
            why.drops.append(_dropped("gate", hit, reason))
    used = {id(run) for _, run in sources.values()}
    for run in kept:
        if id(run) not in used:
            reason = "every sentence it kept is in a better-scored chunk"
            why.drops.append(_dropped("dedup", run, reason))
    why.engine_drops({hit.source.id for hit in hits})
    result.explain = why.result()
    return result


def _best_source(passage: Passage, sources: dict[tuple[str, int], tuple[str, Run]]) -> Run:
    runs = [
        run
        for (_, sid), (_, run) in sources.items()
        if passage.pos_start <= sid <= passage.pos_end
        and run.metadata["chapter"] == passage.chapter
    ]
    return max(runs, key=lambda run: run.score or 0.0)


def _dropped(stage: str, run: Run, reason: str) -> Dropped:
    return Dropped(stage=stage, id=run.source.id, reason=reason, score=run.source.score)  # type: ignore[arg-type]
