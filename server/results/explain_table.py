"""`scoperag search ... --explain`: a search result's explain figures as text a person reads.

Per hit a small table (rank, fused, dense (rank), BM25 (rank)); after the hits the filter as
applied, the candidates each branch returned and what was dropped and why, each candidate named
as its hits are (a hash, a name, a page).
"""

from __future__ import annotations

import json
from typing import Any

from scoperag.server.results.hits import Hit, hits_of, shape_of

_HEADER = ("rank", "fused", "dense (rank)", "BM25 (rank)")


def _figure(figures: dict[str, Any] | None) -> str:
    if not figures:
        return "-"
    return f"{_number(figures.get('score'))} ({figures['rank']})"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _named(fields: dict[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in fields.items())


def _where(tool: str, hit: Hit) -> str:
    named = {key: hit.fields[key] for key in shape_of(tool).identity if key in hit.fields}
    text = " ".join(hit.text.split())
    snippet = f' "{text[:60]}{"…" if len(text) > 60 else ""}"' if text else ""
    return _named(named) + snippet


def render_hit(tool: str, hit: Hit) -> str:
    """One hit's table: what names it, then rank, fused, dense (rank), BM25 (rank)."""
    why = hit.explain or {}
    fused = why["fused"]
    row = (
        str(fused["rank"]),
        f"{_number(fused.get('score'))} {fused['method']}",
        _figure(why.get("dense")),
        _figure(why.get("bm25")),
    )
    widths = [max(len(a), len(b)) for a, b in zip(_HEADER, row, strict=True)]
    lines = [
        f"#{fused['rank']} {_where(tool, hit)}",
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(_HEADER, widths, strict=True)),
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)),
    ]
    if why.get("similarity") is not None:
        lines.append(f"  similarity (cosine, the floor compares it): {why['similarity']:.4f}")
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
        name = _named(drop.get("identity") or {}) or str(drop["id"])
        lines.append(f"  {drop['stage']:<5} {name}  {_number(drop.get('score'))}  {drop['reason']}")
    return "\n".join(lines)


def render_explain(tool: str, result: dict[str, Any]) -> str:
    """Every hit's table, then the result's filter and drops ("" without explain figures)."""
    blocks = [render_hit(tool, hit) for hit in hits_of(tool, result) if hit.explain]
    if result.get("explain"):
        blocks.append(render_result(result["explain"]))
    return "\n\n".join(blocks)
