"""The hits of a search tool's answer, as the result view reads them: which list holds them,
which key their text, where each came from, its score and similarity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

HIT_LISTS = ("hits", "memories", "passages", "results")  # where a tool's answer keeps its hits
TEXT_KEYS = ("text", "content")


@dataclass(frozen=True)
class Hit:
    """One hit: `source` says where it came from in a person's words; `key` names a memory."""

    text: str
    source: str
    score: float | None
    similarity: float | None
    fusion: str | None  # how `score` was made (dbsf, rrf, dense), where the hit says
    explain: dict[str, Any] | None
    key: str | None


def source_of(hit: dict[str, Any]) -> str:
    """Where a hit (or a stored point's payload) came from, in a person's words."""
    if "content_hash" in hit:
        tags = ", ".join(hit.get("tags") or []) or "no tags"
        return f"{hit.get('memory_type')} of {str(hit.get('created_at'))[:10]}, {tags}"
    if "page_label" in hit:
        return f"{hit.get('document_id')}, page {hit['page_label'] or '(unlabelled)'}"
    if "pos_start" in hit:
        return f"{hit.get('chapter_title')}, sentences {hit['pos_start']}-{hit['pos_end']}"
    if "kind" in hit:
        return f"{hit.get('name')}, {hit['kind']} in {hit.get('document_title')}"
    if "scope" in hit:
        return f"{hit.get('title')} ({hit.get('doc_id')}), {hit['scope']}, {hit.get('status')}"
    return ""


def hits_of(tool: str, result: Any) -> list[Hit]:
    """The hits of `tool`'s `result` (none where it holds no list of hits)."""
    if not isinstance(result, dict):
        return []
    found = next((result[k] for k in HIT_LISTS if isinstance(result.get(k), list)), [])
    hits = []
    for hit in found:
        explain = hit.get("explain") if isinstance(hit.get("explain"), dict) else None
        fused = (explain or {}).get("fused") or {}
        hits.append(
            Hit(
                text=next((hit[k] for k in TEXT_KEYS if isinstance(hit.get(k), str)), ""),
                source=source_of(hit),
                score=hit.get("score"),
                similarity=hit.get("similarity"),
                fusion=fused.get("method"),
                explain=explain,
                key=hit.get("content_hash"),
            )
        )
    return hits
