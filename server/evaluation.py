"""Retrieval quality of a user's own questions: hit@k, recall@k and MRR per tool and overall.

A question file is JSONL, one question a line: the tool, its arguments, and the payload values
a relevant hit has (`{"tool": "qdrant-find", "arguments": {"query": "...", "document_id": "x"},
"relevant": [{"physical_page_index": 5}]}`). A hit is relevant to an entry when it has every
key of the entry with that value (or, for a list such as `tags`, among its values). A question
with `"relevant": []` expects nothing: it counts as a false positive when anything is found.
The scores (`eval_metrics`) count each relevant entry once: hit@k, recall@k, MRR and nDCG@k
over the first k hits, per tool, per tag (a question's optional `"tags": ["name", ...]`) and
overall. A line that is not a question, or whose tool refuses its arguments, is reported
with its number and field, and the other lines still run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field, ValidationError

from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.server.eval_metrics import credited, rank_figures
from scoperag.server.results.hits import hits_of

Call = Callable[[str, dict[str, Any]], Any]  # a tool call: its name and its arguments
# how a tool's refusal of its arguments begins (`describe_validation_error`)
_ARGUMENT_ERRORS = ("Invalid value for", "Missing required argument", "Unknown parameter")


class StoredValues(Protocol):
    """What the store behind the tools holds (None: the tool's profile is not known)."""

    def values(self, tool: str) -> dict[str, set[str]] | None:
        """Payload key -> the values stored, for the keys a store lists (documents, tags)."""

    def holds(self, tool: str, entry: dict[str, Any]) -> bool | None:
        """Some stored item has every value of `entry`."""


class Question(BaseModel, extra="forbid"):
    tool: str = Field(description="The MCP tool to ask, e.g. qdrant-find.")
    arguments: dict[str, Any] = Field(description="Its arguments.")
    relevant: list[dict[str, Any]] = Field(
        description="Payload values of the relevant hits; [] when nothing should be found."
    )
    id: str | None = Field(default=None, description="A name to report the question by.")
    tags: list[str] = Field(
        default_factory=list, description="Kinds to report the question under, e.g. 'date'."
    )


class QuestionScore(BaseModel):
    line: int
    id: str | None
    tool: str
    query: str | None
    hit: float = Field(description="1 if a relevant hit is among the first k, else 0.")
    recall: float = Field(description="Share of the relevant entries found in the first k.")
    mrr: float = Field(description="1 / rank of the first relevant hit (0 if none).")
    ndcg: float = Field(default=0.0, description="Discounted gain of the relevant hits in k.")
    rank: int | None = Field(default=None, description="Rank of the first relevant hit.")
    tags: list[str] = Field(default_factory=list, description="The question's tags.")
    relevant: int = Field(description="Relevant entries the question names (0: a negative).")
    hits: int = Field(description="Hits returned (at most k counted).")
    sentences_past_position: int | None = Field(
        default=None, description="search_book: sentences returned past the reader's position."
    )
    # kept for the TREC run and qrels files (`eval_output`), not shown in the report
    ranked: list[dict[str, Any]] = Field(default_factory=list, exclude=True)
    entries: list[dict[str, Any]] = Field(default_factory=list, exclude=True)


class LineProblem(BaseModel):
    """A line left out of the scores: what is wrong with it."""

    line: int
    field: str = Field(description="The field at fault: tool, arguments, relevant, id, json.")
    message: str


class MissingValue(BaseModel):
    """A value the questions name (a document, a book, a tag) that the store does not hold."""

    key: str = Field(description="The payload key, e.g. document_id; '' for a whole entry.")
    value: str = Field(description="The value, or the relevant entry as JSON.")
    tool: str
    lines: list[int] = Field(description="The lines that name it.")


class Figures(BaseModel):
    tool: str = Field(description="A tool name, or 'overall'.")
    questions: int = Field(description="Questions that expect something.")
    hit_rate: float
    recall: float
    mrr: float
    ndcg: float = 0.0
    negatives: int = Field(default=0, description="Questions that expect nothing.")
    false_positives: int = Field(default=0, description="Negatives that returned hits.")
    sentences_past_position: int | None = None


class EvalReport(BaseModel):
    k: int
    overall: Figures
    tools: list[Figures]
    tags: list[Figures] = Field(default_factory=list, description="Per question tag.")
    missed: list[QuestionScore] = Field(description="Questions without a relevant hit in k.")
    scores: list[QuestionScore]
    problems: list[LineProblem] = Field(default_factory=list, description="Lines not scored.")
    missing: list[MissingValue] = Field(
        default_factory=list, description="Values the questions name that the store lacks."
    )


def _problem(number: int, error: ValidationError) -> LineProblem:
    """The first fault of a line that is not a question: its field and what is wrong."""
    first = error.errors()[0]
    if first["type"] == "json_invalid":
        return LineProblem(line=number, field="json", message=f"not JSON: {first['msg']}")
    field = ".".join(str(part) for part in first["loc"]) or "line"
    return LineProblem(line=number, field=field, message=first["msg"])


def read_questions(path: Path) -> tuple[list[tuple[int, Question]], list[LineProblem]]:
    """The questions of a JSONL file with their line numbers, and the lines that are not
    questions (with their field and fault)."""
    questions, problems = [], []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                questions.append((number, Question.model_validate_json(line)))
            except ValidationError as exc:
                problems.append(_problem(number, exc))
    if not questions and not problems:
        raise ScoperagError(f"{path}: no questions (one JSON object a line)")
    return questions, problems


def matches(payload: dict[str, Any], entry: dict[str, Any]) -> bool:
    """The hit has every key of `entry` with its value (a list value: among its items)."""
    for key, wanted in entry.items():
        value = payload.get(key)
        if value != wanted and not (isinstance(value, list) and wanted in value):
            return False
    return True


def _past_position(result: Any) -> int | None:
    """Sentences of a `search_book` result's passages after its `user_pos` (None elsewhere)."""
    user_pos = getattr(result, "user_pos", None)
    passages = getattr(result, "passages", None)
    if user_pos is None or passages is None:
        return None
    return sum(max(0, p.pos_end - max(p.pos_start, user_pos + 1) + 1) for p in passages)


def score(line: int, question: Question, result: Any, k: int) -> QuestionScore:
    """One question's figures from the tool's result (`eval_metrics`: each entry once)."""
    payloads = [hit.fields for hit in hits_of(question.tool, result)[:k]]
    credit = credited(payloads, question.relevant, matches)
    figures = rank_figures(credit, len(question.relevant), k)
    return QuestionScore(
        line=line,
        id=question.id,
        tool=question.tool,
        query=question.arguments.get("query") or question.arguments.get("name"),
        relevant=len(question.relevant),
        hits=len(payloads),
        sentences_past_position=_past_position(result),
        ranked=payloads,
        entries=question.relevant,
        tags=question.tags,
        **figures.model_dump(),
    )


def summarize(tool: str, scores: list[QuestionScore]) -> Figures:
    """Mean figures over the questions that expect something; negatives counted apart."""
    positive = [s for s in scores if s.relevant]
    negatives = [s for s in scores if not s.relevant]
    count = len(positive) or 1
    past = [s.sentences_past_position for s in scores if s.sentences_past_position is not None]
    return Figures(
        tool=tool,
        questions=len(positive),
        hit_rate=sum(s.hit for s in positive) / count,
        recall=sum(s.recall for s in positive) / count,
        mrr=sum(s.mrr for s in positive) / count,
        ndcg=sum(s.ndcg for s in positive) / count,
        negatives=len(negatives),
        false_positives=sum(bool(s.hits) for s in negatives),
        sentences_past_position=sum(past) if past else None,
    )


def evaluate(call: Call, path: Path, k: int = 5, stored: StoredValues | None = None) -> EvalReport:
    """Ask every question of `path` with `call(tool, arguments)` and score the first k hits;
    with `stored`, name the values the questions ask for that the store does not hold."""
    if k < 1:
        raise InvalidParameterError("k", k, "an integer of at least 1")
    questions, problems = read_questions(path)
    scores = []
    for line, question in questions:
        try:
            result = call(question.tool, question.arguments)
        except ScoperagError as exc:
            message = f"{question.tool}: {exc}"
            field = "arguments" if str(exc).startswith(_ARGUMENT_ERRORS) else "tool"
            problems.append(LineProblem(line=line, field=field, message=message))
            continue
        scores.append(score(line, question, result, k))
    by_tool: dict[str, list[QuestionScore]] = {}
    by_tag: dict[str, list[QuestionScore]] = {}
    for item in scores:
        by_tool.setdefault(item.tool, []).append(item)
        for tag in item.tags:
            by_tag.setdefault(tag, []).append(item)
    return EvalReport(
        k=k,
        overall=summarize("overall", scores),
        tools=[summarize(tool, items) for tool, items in by_tool.items()],
        tags=[summarize(f"tag {tag}", by_tag[tag]) for tag in sorted(by_tag)],
        missed=[s for s in scores if s.relevant and not s.hit],
        scores=scores,
        problems=sorted(problems, key=lambda problem: problem.line),
        missing=missing_values(questions, scores, stored) if stored else [],
    )


def missing_values(
    questions: list[tuple[int, Question]], scores: list[QuestionScore], stored: StoredValues
) -> list[MissingValue]:
    """The values of listable keys (documents, books, tags) that questions name, in their
    arguments or relevant entries, and the store does not hold; then the relevant entries of
    the other missed questions that no stored item has."""
    missing: dict[tuple[str, str, str], list[int]] = {}
    for line, question in questions:
        held = stored.values(question.tool) or {}
        named = [question.arguments, *question.relevant]
        for key, values in held.items():
            for given in named:
                value = given.get(key)
                for item in value if isinstance(value, list) else [value]:
                    if item is not None and str(item) not in values:
                        missing.setdefault((key, str(item), question.tool), []).append(line)
    explained = {line for lines in missing.values() for line in lines}
    missed = {s.line for s in scores if s.relevant and not s.hit} - explained
    for line, question in questions:
        for entry in question.relevant if line in missed else []:
            if stored.holds(question.tool, entry) is False:
                text = json.dumps(entry, ensure_ascii=False, sort_keys=True)
                missing.setdefault(("", text, question.tool), []).append(line)
    return [
        MissingValue(key=key, value=value, tool=tool, lines=sorted(set(lines)))
        for (key, value, tool), lines in missing.items()
    ]
