"""`scoperag search ... --explain`: a search result's explain figures as text a person reads.

Per hit a small table (rank, fused, dense (rank), BM25 (rank)); after the hits the filter as
applied, the candidates each branch returned and what was dropped and why.
"""

from __future__ import annotations

import json
from typing import Any

# the keys that say where a hit comes from, the first ones present shown
_WHERE = ("document_id", "page_label", "book_id", "chapter", "pos_start", "pos_end", "name")
_WHERE += ("document", "doc_id", "path", "content_hash")
_HEADER = ("rank", "fused", "dense (rank)", "BM25 (rank)")


def explained_hits(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The result's hits (whatever its list is called: hits, memories, passages, results)."""
    for value in result.values():
        if (
            isinstance(value, list)
            and value
            and isinstance(value[0], dict)
            and "explain" in value[0]
        ):
            return value
    return []


def without_explain(result: dict[str, Any]) -> dict[str, Any]:
    """`result` and its hits without their `explain` (what a search prints without it)."""
    hits = explained_hits(result)
    plain = {key: value for key, value in result.items() if key != "explain"}
    for key, value in plain.items():
        if value is hits:
            plain[key] = [{k: v for k, v in hit.items() if k != "explain"} for hit in hits]
    return plain


def _figure(figures: dict[str, Any] | None) -> str:
    if not figures:
        return "-"
    return f"{_number(figures.get('score'))} ({figures['rank']})"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _where(hit: dict[str, Any]) -> str:
    parts = [f"{key} {hit[key]}" for key in _WHERE if hit.get(key) is not None]
    text = " ".join(str(hit.get("text") or hit.get("content") or "").split())
    snippet = f' "{text[:60]}{"…" if len(text) > 60 else ""}"' if text else ""
    return ", ".join(parts[:3]) + snippet


def render_hit(hit: dict[str, Any]) -> str:
    """One hit's table: where it is from, then rank, fused, dense (rank), BM25 (rank)."""
    why = hit["explain"]
    fused = why["fused"]
    row = (
        str(fused["rank"]),
        f"{_number(fused.get('score'))} {fused['method']}",
        _figure(why.get("dense")),
        _figure(why.get("bm25")),
    )
    widths = [max(len(a), len(b)) for a, b in zip(_HEADER, row, strict=True)]
    lines = [
        f"#{fused['rank']} {_where(hit)}",
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(_HEADER, widths, strict=True)),
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)),
    ]
    if why.get("similarity") is not None:
        lines.append(f"  similarity (the floor compares): {why['similarity']:.4f}")
    if match := why.get("name_match"):
        lines.append(f"  name match: {match['kind']} {match['score']:.4f}")
    return "\n".join(line.rstrip() for line in lines)


def render_result(explain: dict[str, Any]) -> str:
    """The filter as applied, the branches' candidates, and what was dropped and why."""
    candidates = explain["candidates"]
    bm25 = candidates.get("bm25")
    lines = [
        f"filter: {json.dumps(explain.get('filter'), ensure_ascii=False)}",
        f"prefetch limit {explain['prefetch_limit']}; candidates: dense {candidates['dense']}, "
        f"BM25 {'none ran' if bm25 is None else bm25}",
    ]
    dropped, total = explain.get("dropped", []), explain["dropped_total"]
    shown = f" (first {len(dropped)})" if total > len(dropped) else ""
    lines.append(f"dropped: {total}{shown}")
    for drop in dropped:
        lines.append(
            f"  {drop['stage']:<5} {drop['id']}  {_number(drop.get('score'))}  {drop['reason']}"
        )
    return "\n".join(lines)


def render_explain(result: dict[str, Any]) -> str:
    """Every hit's table, then the result's filter and drops ("" without explain figures)."""
    blocks = [render_hit(hit) for hit in explained_hits(result)]
    if result.get("explain"):
        blocks.append(render_result(result["explain"]))
    return "\n\n".join(blocks)
