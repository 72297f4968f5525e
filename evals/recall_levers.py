"""Recall levers per profile: recall@5 (each relevant item once), MRR and p50 tool-call latency,
with BM25's own candidates and the date boost each off and on, on the project's own sets.

Each set runs through its MCP tool (`scoperag.server.evaluation.evaluate`, the function
behind `scoperag eval`) in one store per set, built on the first run and reused after:

- memory conversations: evals/data/memory_conversations.json (evals/make_conversations.py),
  questions naming companies, invoices, people and dates (`--tags` splits them by kind);
- memory devbench: ../shared/data/memories/devbench_dataset.json, its 20 questions;
- pdf known pages: ../shared/data/pdf, evals/questions/pdf_known_pages.jsonl;
- dnd names: ../shared/data/dnd, evals/questions/dnd_names.jsonl (top 1).

The levers: `dense candidates` (keywords re-rank the dense candidates only), `+ bm25
candidates` (BM25's own top candidates join them) and, for memory, `+ date boost`. Every
question is asked once to warm up, then once per lever, the levers interleaved. The last
line of each set is the paired permutation test of the full setting against the first.

    python evals/recall_levers.py --store /tmp/levers            # every set
    python evals/recall_levers.py --store /tmp/levers --sets memory-conversations --tags
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "data"
sys.path.insert(0, str(HERE))

SETS: dict[str, dict[str, Any]] = {
    "memory-conversations": {
        "profile": "memory",
        "data": HERE / "data" / "memory_conversations.json",
        "questions": HERE / "questions" / "memory_conversations.jsonl",
        "k": 5,
    },
    "memory-devbench": {
        "profile": "memory",
        "data": SHARED / "memories" / "devbench_dataset.json",
        "questions": HERE / "questions" / "memory_devbench.jsonl",
        "k": 5,
    },
    "pdf-known-pages": {
        "profile": "pdf",
        "data": SHARED / "pdf",
        "questions": HERE / "questions" / "pdf_known_pages.jsonl",
        "k": 5,
    },
    "dnd-names": {
        "profile": "dnd",
        "data": SHARED / "dnd",
        "questions": HERE / "questions" / "dnd_names.jsonl",
        "k": 1,
    },
}


@contextmanager
def lever(union: bool, dates: bool) -> Iterator[None]:
    """The searches with BM25's own candidates and the memory date boost on or off."""
    from scoperag.retrievers.searches import FilteredSearch

    with mock.patch.object(FilteredSearch, "keyword_candidates", union):
        if dates:
            yield
            return
        with mock.patch("scoperag.server.profiles.memory.service.named_date", lambda *a: None):
            yield


def build(store: Any, name: str, spec: dict[str, Any]) -> None:
    """Ingest the set's data into a fresh store (a store that has it is reused)."""
    runtime = store.runtime
    profile = spec["profile"]
    if runtime.backend.list_collections():
        return
    started = time.perf_counter()
    if profile == "memory":
        from scoperag.pipelines.memories import import_memories

        import_memories(spec["data"], runtime.backend, runtime.embedder)
    elif profile == "pdf":
        from scoperag.server.profiles.pdf.service import ingest_paths

        ingest_paths(runtime, [spec["data"]], None, None)
    else:
        from scoperag.server.profiles.dnd.service import ingest_paths

        ingest_paths(runtime, [spec["data"]], None)
    print(f"  built {name} in {time.perf_counter() - started:.0f} s", flush=True)


def measure(store: Any, spec: dict[str, Any], levers: list[tuple[str, bool, bool]]) -> None:
    from scoperag.server.eval_metrics import compare_scores
    from scoperag.server.evaluation import evaluate

    session = store._session
    times: dict[str, list[float]] = {label: [] for label, _, _ in levers}
    current: list[str] = [""]

    def timed(tool: str, arguments: dict[str, Any]) -> Any:
        started = time.perf_counter()
        result = session.call(tool, arguments)
        if current[0]:
            times[current[0]].append((time.perf_counter() - started) * 1000)
        return result

    path, k = spec["questions"], spec["k"]
    evaluate(session.call, path, k)  # warm-up: model, engine, caches
    reports = {}
    for label, union, dates in levers:
        current[0] = label
        with lever(union, dates):
            reports[label] = evaluate(timed, path, k)
    for label, report in reports.items():
        rows = [report.overall, *(report.tags if SHOW_TAGS else [])]
        for figures in rows:
            name = label if figures.tool == "overall" else f"  {figures.tool}"
            print(
                f"  {name:<22} {figures.questions:>3} q  recall@{k} {figures.recall:.3f}  "
                f"MRR {figures.mrr:.3f}  nDCG@{k} {figures.ndcg:.3f}"
                + (f"  p50 {statistics.median(times[label]):.1f} ms" if name == label else "")
            )
    first, last = reports[levers[0][0]], reports[levers[-1][0]]
    tests = {t.metric: t for t in compare_scores(first.scores, last.scores)}
    print(
        f"  {levers[-1][0]} against {levers[0][0]}: recall p = {tests['recall'].p_value:.3f}, "
        f"MRR p = {tests['mrr'].p_value:.3f} (paired permutation)",
        flush=True,
    )


SHOW_TAGS = False


def main() -> None:
    global SHOW_TAGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="Folder of the sets' stores.")
    parser.add_argument("--sets", default=",".join(SETS), help="Comma-separated set names.")
    parser.add_argument("--backend", choices=["local", "edge"], default=None)
    parser.add_argument("--tags", action="store_true", help="Figures per question tag too.")
    args = parser.parse_args()
    SHOW_TAGS = args.tags

    import scoperag

    for name in args.sets.split(","):
        spec = SETS[name]
        if not spec["data"].exists():
            print(f"{name}: skipped, {spec['data']} is absent")
            continue
        options: dict[str, Any] = {"profiles": [spec["profile"]], "progress": False}
        if args.backend:
            options["backend"] = args.backend
        with scoperag.Store(args.store / name, **options) as store:
            print(f"{name} ({store.runtime.backend.name}):", flush=True)
            build(store, name, spec)
            levers = [("dense candidates", False, False), ("+ bm25 candidates", True, False)]
            if spec["profile"] == "memory":
                levers.append(("+ date boost", True, True))
            measure(store, spec, levers)


if __name__ == "__main__":
    main()
