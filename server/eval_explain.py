"""`scoperag eval --explain`: why each missed question missed.

A missed question is asked again through its tool with `explain` and the largest limit the tool
takes. Each relevant entry is then found: among the hits (its fused, dense and BM25 ranks: the
limit kept it out of the first k), among what was dropped (the floor, the spoiler gate or
de-duplication: the stage and its reason), outside the filter as applied, or matching the filter
while neither branch returned it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field
from qdrant_client import models

from scoperag.core.engine.backend import VectorBackend
from scoperag.server.evaluation import Call, EvalReport, Question, matches, read_questions
from scoperag.server.results.hits import Hit, hits_of

LIMIT_PARAMETERS = ("limit", "top_k", "page_size")


class RelevantWhy(BaseModel):
    entry: dict[str, Any] = Field(description="The relevant entry, as the question names it.")
    stage: str = Field(description="limit, floor, gate, dedup, filter, or absent.")
    fused_rank: int | None = None
    dense: dict[str, Any] | None = Field(default=None, description="Score and rank, or null.")
    bm25: dict[str, Any] | None = Field(default=None, description="Score and rank, or null.")
    reason: str


class MissWhy(BaseModel):
    line: int
    id: str | None
    query: str | None
    relevant: list[RelevantWhy]


def _widened(question: Question, properties: dict[str, Any]) -> dict[str, Any]:
    """The question's arguments with explain, and its limit raised to the tool's maximum."""
    arguments = {**question.arguments, "explain": True}
    for name in LIMIT_PARAMETERS:
        if name in properties:
            arguments[name] = properties[name].get("maximum", arguments.get(name))
    return arguments


def _matching(entry: dict[str, Any]) -> list[models.Condition]:
    """`entry` as conditions (a list value: any of its items)."""
    return [
        models.FieldCondition(key=key, match=models.MatchValue(value=value))
        for key, value in entry.items()
    ]


class MissExplainer:
    """Explains the misses of one report, asking the tools through `call` and the engine."""

    def __init__(
        self, call: Call, properties: Callable[[str], dict[str, Any]], backend: VectorBackend
    ) -> None:
        self.call = call
        self.properties = properties
        self.backend = backend

    def explain(self, report: EvalReport, questions: list[tuple[int, Question]]) -> list[MissWhy]:
        by_line = dict(questions)
        return [self.miss(item.line, by_line[item.line]) for item in report.missed]

    def miss(self, line: int, question: Question) -> MissWhy:
        arguments = _widened(question, self.properties(question.tool))
        result = self.call(question.tool, arguments)
        data = result.model_dump(mode="json") if hasattr(result, "model_dump") else result
        hits = hits_of(question.tool, data)
        why = [self.entry(entry, hits, data.get("explain") or {}) for entry in question.relevant]
        query = question.arguments.get("query") or question.arguments.get("name")
        return MissWhy(line=line, id=question.id, query=query, relevant=why)

    def entry(self, entry: dict[str, Any], hits: list[Hit], explain: dict[str, Any]) -> RelevantWhy:
        for hit in hits:
            if matches(hit.fields, entry):
                figures = hit.explain or {}
                rank = (figures.get("fused") or {}).get("rank")
                return RelevantWhy(
                    entry=entry,
                    stage="limit",
                    fused_rank=rank,
                    dense=figures.get("dense"),
                    bm25=figures.get("bm25"),
                    reason=f"ranked {rank} after fusion: below the first k",
                )
        dropped = {drop["id"]: drop for drop in explain.get("dropped") or []}
        found = self._points(_matching(entry))
        for point_id in found:
            if point_id in dropped:
                drop = dropped[point_id]
                return RelevantWhy(entry=entry, stage=drop["stage"], reason=drop["reason"])
        if not found:
            return RelevantWhy(entry=entry, stage="absent", reason="no stored item has it")
        applied = explain.get("filter")
        inside = [*_matching(entry)]
        if applied:
            inside.append(models.Filter.model_validate(applied))
        if not self._points(inside):
            shown = json.dumps(applied)
            reason = f"neither branch returned it: the filter as applied excludes it: {shown}"
            return RelevantWhy(entry=entry, stage="filter", reason=reason)
        depth = explain.get("prefetch_limit")
        reason = f"neither branch returned it (dense nor BM25, each {depth} deep)"
        return RelevantWhy(entry=entry, stage="limit", reason=reason)

    def _points(self, conditions: list[Any]) -> set[Any]:
        """Ids of the points matching every condition, in any collection (first 100 each)."""
        flt = models.Filter(must=conditions)
        found: set[Any] = set()
        for collection in self.backend.list_collections():
            found |= {record.id for record in self.backend.scroll(collection, flt, 100)}
        return found


def explain_misses(
    call: Call,
    properties: Callable[[str], dict[str, Any]],
    backend: VectorBackend,
    report: EvalReport,
    path: Any,
) -> list[MissWhy]:
    """Why each missed question of `report` (from the file `path`) missed."""
    questions, _ = read_questions(path)  # the malformed lines are in the report already
    return MissExplainer(call, properties, backend).explain(report, questions)


def render_misses(misses: list[MissWhy]) -> str:
    """The reasons as text: one block per missed question, one line per relevant entry."""
    lines = []
    for miss in misses:
        lines.append(f"why {miss.id or f'line {miss.line}'}: {miss.query}")
        for item in miss.relevant:
            ranks = ""
            if item.fused_rank is not None:
                dense = f"dense rank {item.dense['rank']}" if item.dense else "dense: not returned"
                bm25 = f"BM25 rank {item.bm25['rank']}" if item.bm25 else "BM25: not returned"
                ranks = f" (fused rank {item.fused_rank}, {dense}, {bm25})"
            lines.append(f"  {item.entry}: {item.stage}{ranks}: {item.reason}")
    return "\n".join(lines)
