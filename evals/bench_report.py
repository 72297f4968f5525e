"""The benchmark's figures as evals/results/bench.json, a markdown report and a PNG chart."""

from __future__ import annotations

import json
import os
import platform
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TARGETS = {"tool_ms": 15.0, "browse_ms": 5.0, "ingestion_ratio": 0.8}


def _cell(figures: dict[str, float] | None) -> str:
    return "–" if not figures else f"{figures['p50']:.2f} / {figures['p95']:.2f}"


def _column(run: dict[str, Any]) -> str:
    """The engine, and which checkout (`--before`) and load (`--busy`) it ran under."""
    notes = [note for note in ("before" if run.get("code") == "before" else None,) if note]
    notes += ["busy"] if run.get("busy") else []
    return ", ".join([run["backend"], *notes])


def _labelled(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**run, "backend": _column(run)} for run in runs]


def _ms(figures: dict[str, Any] | None, part: str) -> str:
    value = (figures or {}).get(part, {}).get("p50")
    return "–" if value is None else f"{value:.2f}"


def _by(runs: list[dict[str, Any]]) -> dict[tuple[int, str], dict[str, Any]]:
    return {(run["size"], run["backend"]): run for run in runs}


def _calls(run: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (profile, label): call
        for profile, scenario in run["scenarios"].items()
        for label, call in scenario["calls"].items()
    }


def headline(runs: list[dict[str, Any]]) -> list[str]:
    """The figures the issue sets targets for, on the largest Edge run."""
    edge = [run for run in runs if run["backend"] == "edge"]
    if not edge:
        return []
    run = max(edge, key=lambda r: r["size"])
    calls = _calls(run)
    searches = [c["without_embedding"]["p50"] for c in calls.values() if not c["browse"]]
    browses = [c["without_embedding"]["p50"] for c in calls.values() if c["browse"]]
    ingestion = [s["ingestion"]["ratio"] for s in run["scenarios"].values() if "ingestion" in s]
    lines = [f"At {run['size']:,} nodes on Edge (this 2-core machine):"]
    if searches:
        lines.append(
            f"- filtered tool calls, p50 without the query embedding: {min(searches):.1f}–"
            f"{max(searches):.1f} ms (target < {TARGETS['tool_ms']:.0f} ms)"
        )
    if browses:
        lines.append(
            f"- query-less browse tool calls, p50: {min(browses):.1f}–{max(browses):.1f} ms; "
            "ordered scroll straight on the engine: "
            + ", ".join(
                f"{p} {s['browse_engine']['p50']:.2f} ms"
                for p, s in run["scenarios"].items()
                if "browse_engine" in s
            )
            + f" (target < {TARGETS['browse_ms']:.0f} ms)"
        )
    if ingestion:
        lines.append(
            f"- ingestion at {ingestion[0]:.2f}x the raw embedding throughput "
            f"(target >= {TARGETS['ingestion_ratio']})"
        )
    return lines


def markdown(runs: list[dict[str, Any]]) -> str:
    runs = _labelled(runs)
    by = _by(runs)
    sizes = sorted({run["size"] for run in runs})
    backends = list(dict.fromkeys(run["backend"] for run in runs))
    out = [
        "# Benchmark results",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} cores (shared with other work while it ran), Python "
        f"{platform.python_version()}, MiniLM-L6-v2 embeddings of real text "
        "(evals/bench_corpus.py). Produced by `python evals/bench.py`.",
        "",
        *headline(runs),
        "",
        "Local mode above 20,000 nodes runs the pdf and memory profiles only, with a third of "
        "the queries (it commits every point and scans in Python: hours otherwise); `–` marks "
        "what was not run.",
        "",
        "## Tool calls through MCP (in-memory client): p50 / p95 ms without the query embedding",
        "",
        "| nodes | profile | call | " + " | ".join(backends) + " |",
        "|---:|---|---|" + "---:|" * len(backends),
    ]
    for size in sizes:
        labels = list(
            dict.fromkeys(k for b in backends if (size, b) in by for k in _calls(by[size, b]))
        )
        for profile, label in labels:
            cells = [
                _cell(_calls(by[size, b]).get((profile, label), {}).get("without_embedding"))
                if (size, b) in by
                else "–"
                for b in backends
            ]
            out.append(f"| {size:,} | {profile} | {label} | " + " | ".join(cells) + " |")
    out += [
        "",
        "## Where a call's time goes (p50 ms)",
        "",
        "Embedding = the query embedding; engine = time inside the engine's API (search, "
        "count, scroll, facet); glue = the rest of the tool's handler (our code); MCP = the "
        "call's time less the handler's (FastMCP server and client layers, validation, "
        "serialisation), of which client checks = the client checking the result against the "
        "tool's output schema (MCP SDK jsonschema, FastMCP's typed parse). Straight on "
        "engine = the call's vector query replayed on the engine's own API; ratio = call "
        "without embedding / straight on engine. p95 is end to end "
        "without the embedding.",
        "",
        "| nodes | engine | profile | call | n | embedding | engine | glue | MCP "
        "| client checks | p95 | straight on engine | ratio |",
        "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (size, backend), run in sorted(by.items()):
        for (profile, label), call in _calls(run).items():
            raw = call.get("raw_engine", {}).get("p50")
            out.append(
                f"| {size:,} | {backend} | {profile} | {label} | {call['n']} | "
                f"{_ms(call, 'embedding')} | {_ms(call, 'engine')} | {_ms(call, 'glue')} | "
                f"{_ms(call, 'mcp')} | {_ms(call, 'client_checks')} | "
                f"{call['without_embedding']['p95']:.2f} | "
                f"{'–' if raw is None else f'{raw:.2f}'} | "
                f"{call.get('overhead_ratio', '–')} |"
            )
    out += [
        "",
        "## Engine figures",
        "",
        "| nodes | engine | bulk load (nodes/s) | ingestion vs raw embedding | recency browse on "
        "engine p50 / p95 ms | reopen s (slowest collection) | disk MB per collection | "
        "peak RSS (anonymous) MB; %s MB before the stores |",
        "|---:|---|---:|---|---|---:|---:|---:|",
    ]
    baseline = min(run["baseline_rss_mb"] for run in runs)
    out[-2] = out[-2] % f"{baseline:.0f}"
    for (size, backend), run in sorted(by.items()):
        scenarios = run["scenarios"].values()
        loads = [s.get("bulk_load_per_s", 0) for s in scenarios]
        ingestion = next((s["ingestion"] for s in scenarios if "ingestion" in s), None)
        browse = "; ".join(
            f"{p} {_cell(s['browse_engine'])}"
            for p, s in run["scenarios"].items()
            if "browse_engine" in s
        )
        ingest = (
            f"{ingestion['ingestion_per_s']:.0f}/s vs {ingestion['raw_embedding_per_s']:.0f}/s "
            f"= {ingestion['ratio']:.2f}x"
            if ingestion
            else "–"
        )
        out.append(
            f"| {size:,} | {backend} | {min(loads):,.0f}–{max(loads):,.0f} | {ingest} | {browse} | "
            f"{max(s.get('reopen_s', 0) for s in scenarios):.2f} | "
            f"{sum(s.get('disk_mb', 0) for s in scenarios) / len(scenarios):,.1f} | "
            f"{run['peak_rss_mb']:,.0f} "
            f"({run.get('peak_anonymous_mb', float('nan')):,.0f}) |"
        )
    recall_rows = [
        (size, backend, profile, label, shape)
        for (size, backend), run in sorted(by.items())
        for profile, scenario in run["scenarios"].items()
        for label, shape in scenario.get("recall", {}).items()
    ]
    if recall_rows:
        out += [
            "",
            "## Search quality on Edge: recall@10 against exact search",
            "",
            "Default = the engine's default search params; planned = what "
            "EdgeCollection.plan_search chooses per query (exact search below 20,000 matching "
            "points, else an HNSW beam of 128 / the filter's share, 256 to 1024).",
            "",
            "| nodes | filter (collection) | share | recall default | recall planned | exact ms "
            "| default ms | planned ms |",
            "|---:|---|---:|---:|---:|---:|---:|---:|",
        ]
        for size, _, profile, label, shape in recall_rows:
            out.append(
                f"| {size:,} | {label} ({profile}) | {shape['share']:.1%} | "
                f"{shape['recall_default']:.3f} | {shape['recall_planned']:.3f} | "
                f"{shape['exact_ms']:.2f} | {shape['default_ms']:.2f} | {shape['planned_ms']:.2f} |"
            )
    return "\n".join(out) + "\n"


def chart(runs: list[dict[str, Any]], path: Path) -> None:
    """Grouped bars: p50 without embedding of every call, one panel per size, log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = _labelled(runs)
    by = _by(runs)
    sizes = sorted({run["size"] for run in runs})
    backends = list(dict.fromkeys(run["backend"] for run in runs))
    figure, axes = plt.subplots(len(sizes), 1, figsize=(12, 4.6 * len(sizes)), squeeze=False)
    for axis, size in zip(axes[:, 0], sizes, strict=True):
        labels = list(
            dict.fromkeys(k for b in backends if (size, b) in by for k in _calls(by[size, b]))
        )
        width = 0.8 / len(backends)
        for number, backend in enumerate(backends):
            calls = _calls(by[size, backend]) if (size, backend) in by else {}
            values = [
                calls.get(key, {}).get("without_embedding", {}).get("p50", 0) for key in labels
            ]
            axis.bar([i + number * width for i in range(len(labels))], values, width, label=backend)
        axis.set_yscale("log")
        axis.set_ylabel("p50 ms (no embedding)")
        axis.set_title(f"{size:,} nodes per collection")
        axis.set_xticks([i + width * (len(backends) - 1) / 2 for i in range(len(labels))])
        axis.set_xticklabels(
            [f"{p}\n" + textwrap.fill(label, 18) for p, label in labels], fontsize=6
        )
        axis.axhline(TARGETS["tool_ms"], color="grey", linestyle="--", linewidth=0.8)
        axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_report(runs: list[dict[str, Any]], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(runs, indent=2))
    (out / "bench.md").write_text(markdown(runs))
    chart(runs, out / "bench.png")
    print(markdown(runs))
    print(f"wrote {out / 'bench.md'}, {out / 'bench.png'}, {out / 'bench.json'}")
