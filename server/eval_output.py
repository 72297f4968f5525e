"""What `scoperag eval` writes and compares beside its report: a TREC run file and its qrels
(read unchanged by trec_eval, ranx and pytrec_eval), a second scoring with one argument changed,
and the values the questions name that the store does not hold.

A hit's TREC document id is made of its payload values: the relevant entry it matches (its keys
and values, `document_id=x;physical_page_index=7`), else its own values of the keys the
question's entries name, else its identity (`content_hash`, `slug`, ...) or a digest of its text.
The qrels list each relevant entry under the same id with relevance 1.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from scoperag.core.errors import InvalidParameterError
from scoperag.server.eval_metrics import Significance, compare_scores
from scoperag.server.evaluation import Call, EvalReport, QuestionScore, matches

if TYPE_CHECKING:
    from scoperag.server.profiles.declaration import Profile
    from scoperag.server.runtime import Runtime

# payload keys that name one stored item, for a hit whose question names no relevant entry
IDENTITY_KEYS = ("content_hash", "slug", "doc_id", "document_id", "book_id")
_SPACE = re.compile(r"\s")


def _token(text: str) -> str:
    """`text` as one TREC token: whitespace percent-encoded (TREC fields are split on it)."""
    return _SPACE.sub(lambda m: f"%{ord(m.group()):02X}", text.replace("%", "%25")) or "-"


def _values_id(values: dict[str, Any]) -> str:
    return _token(";".join(f"{key}={_plain(values[key])}" for key in sorted(values)))


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def qid(item: QuestionScore) -> str:
    """The question's TREC id: its `id`, else `line-N`."""
    return _token(item.id) if item.id else f"line-{item.line}"


def docid(item: QuestionScore, hit: dict[str, Any]) -> str:
    """A hit's TREC document id (see the module's docstring)."""
    for entry in item.entries:
        if matches(hit, entry):
            return _values_id(entry)
    keys = {key for entry in item.entries for key in entry}
    keys = keys or {next((k for k in IDENTITY_KEYS if hit.get(k) is not None), "")} - {""}
    if keys:
        return _values_id({key: hit.get(key) for key in keys})
    text = str(hit.get("text") or hit.get("content") or "")
    return "text-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def run_lines(report: EvalReport, tag: str) -> list[str]:
    """`qid Q0 docid rank score tag` for each question's first k hits (a document id once per
    question, at its best rank; a hit without a score scores k + 1 - rank)."""
    lines = []
    for item in report.scores:
        seen: set[str] = set()
        for hit in item.ranked:
            document = docid(item, hit)
            if document in seen:
                continue
            seen.add(document)
            rank = len(seen)
            value = hit.get("score")
            figure = value if isinstance(value, (int, float)) else report.k + 1 - rank
            lines.append(f"{qid(item)} Q0 {document} {rank} {figure:.6f} {_token(tag)}")
    return lines


def qrels_lines(report: EvalReport) -> list[str]:
    """`qid 0 docid 1` for each relevant entry of each scored question."""
    return [
        f"{qid(item)} 0 {_values_id(entry)} 1" for item in report.scores for entry in item.entries
    ]


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


class StoreContents:
    """What `runtime`'s store holds, as `evaluation.StoredValues` asks it: the values of the
    keys `scoperag list` groups by (documents, books, tags), and whether an item has given
    payload values (none do where the collection does not exist)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._held: dict[str, dict[str, set[str]]] = {}

    def _profile(self, tool: str) -> Profile | None:
        from scoperag.server.profiles import declarations

        owners = declarations(self.runtime.settings.profiles)
        return next((p for p in owners if tool in p.methods.values()), None)

    def values(self, tool: str) -> dict[str, set[str]] | None:
        from scoperag.server.data_admin import describe_profile

        profile = self._profile(tool)
        if profile is None:
            return None
        if profile.name not in self._held:
            data = describe_profile(self.runtime.backend, self.runtime.settings, profile.name)
            groups = data.groups or {}
            self._held[profile.name] = {
                key: set(groups.get(group, {})) for group, key in profile.groups.items()
            }
        return self._held[profile.name]

    def holds(self, tool: str, entry: dict[str, Any]) -> bool | None:
        from qdrant_client import models

        profile = self._profile(tool)
        scalars = (str, int, bool)
        if profile is None or not all(isinstance(v, scalars) for v in entry.values()):
            return None
        collection = profile.collection(self.runtime.settings)
        if not self.runtime.backend.collection_exists(collection):
            return False
        conditions: list[models.Condition] = [
            models.FieldCondition(key=key, match=models.MatchValue(value=value))
            for key, value in entry.items()
        ]
        return self.runtime.backend.count(collection, models.Filter(must=conditions)) > 0


def changed_call(
    call: Call, schemas: dict[str, dict[str, Any]], change: str
) -> tuple[Call, str, Any]:
    """`call` with `PARAM=VALUE` given to every tool that takes PARAM (the value read as JSON
    where it parses); PARAM taken by no tool of `schemas` is an error naming them."""
    from scoperag.server.cli.tool_arguments import parse_value

    name, sep, text = change.partition("=")
    takers = {tool for tool, schema in schemas.items() if name in schema.get("properties", {})}
    if not sep or not name or not takers:
        accepted = sorted({p for s in schemas.values() for p in s.get("properties", {})})
        raise InvalidParameterError(
            "--compare", change, f"PARAM=VALUE, PARAM one of {', '.join(accepted)}"
        )
    value = parse_value(text, next(iter(schemas[t] for t in sorted(takers)))["properties"][name])

    def changed(tool: str, arguments: dict[str, Any]) -> Any:
        return call(tool, {**arguments, name: value} if tool in takers else arguments)

    return changed, name, value


def changed_questions(base: EvalReport, other: EvalReport) -> list[dict[str, Any]]:
    """The questions whose hit, recall or rank of the first relevant hit differ."""
    before = {item.line: item for item in base.scores}
    changes = []
    for item in other.scores:
        old = before.get(item.line)
        if old is None or (old.hit, old.recall, old.mrr) == (item.hit, item.recall, item.mrr):
            continue
        changes.append(
            {
                "line": item.line,
                "id": item.id,
                "query": item.query,
                "before": {"hit": old.hit, "recall": old.recall, "rank": _rank(old.mrr)},
                "after": {"hit": item.hit, "recall": item.recall, "rank": _rank(item.mrr)},
            }
        )
    return changes


def _rank(mrr: float) -> int | None:
    return round(1 / mrr) if mrr else None


class Comparison(BaseModel):
    """One question file scored twice (another store, or one argument changed), side by side."""

    base: EvalReport
    other: EvalReport
    changed: list[dict[str, Any]] = Field(description="Questions whose outcome changed.")
    significance: list[Significance] = Field(description="Paired test of each metric.")


def compare(base: EvalReport, other: EvalReport) -> Comparison:
    """`other` against `base`: the questions that changed and each metric's paired test."""
    return Comparison(
        base=base,
        other=other,
        changed=changed_questions(base, other),
        significance=compare_scores(base.scores, other.scores),
    )
