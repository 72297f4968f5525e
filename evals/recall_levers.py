"""Recall levers per profile: recall@5 (each relevant item once), MRR and p50 tool-call latency,
with BM25's own candidates and the date boost each off and on, on the project's own sets.

Each set runs through its MCP tool, scored as `scoperag eval` scores (each relevant item
once), in one store per set, built on the first run and reused after:

- memory conversations: evals/data/memory_conversations.json (evals/make_conversations.py),
  questions naming companies, invoices, people and dates (`--tags` splits them by kind);
- memory devbench: ../shared/data/memories/devbench_dataset.json, its 20 questions;
- pdf known pages: ../shared/data/pdf, evals/questions/pdf_known_pages.jsonl;
- dnd names: ../shared/data/dnd, evals/questions/dnd_names.jsonl (top 1).

The levers: `dense candidates` (keywords re-rank the dense candidates only), `+ bm25
candidates` (BM25's own top candidates join them) and, for memory, `+ date boost`. Every
question is asked once to warm up, then once per lever, the levers interleaved question by
question. The last line of each set is the paired permutation test of the full setting
against the first. Latencies are of whole tool calls (embedding included) on a shared
machine: compare them within a run.

    python evals/recall_levers.py --store /tmp/levers            # every set
    python evals/recall_levers.py --store /tmp/levers --sets memory-conversations --tags
    python evals/recall_levers.py --engine-cost 10000   # the levers' engine cost, 10k memories
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
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
    """Each question under every lever in turn (the levers interleaved, so the machine's load
    falls on all alike), then each lever's figures and the paired test of the last lever
    against the first."""
    from scoperag.server.eval_metrics import compare_scores
    from scoperag.server.evaluation import read_questions, score, summarize

    session, k = store._session, spec["k"]
    questions, _ = read_questions(spec["questions"])
    scores: dict[str, list[Any]] = {label: [] for label, _, _ in levers}
    times: dict[str, list[float]] = {label: [] for label, _, _ in levers}
    for _, question in questions:  # a warm-up round: model, engine, caches
        session.call(question.tool, question.arguments)
    for line, question in questions:
        for label, union, dates in levers:
            with lever(union, dates):
                started = time.perf_counter()
                result = session.call(question.tool, question.arguments)
                times[label].append((time.perf_counter() - started) * 1000)
            scores[label].append(score(line, question, result, k))
    for label, items in scores.items():
        by_tag: dict[str, list[Any]] = {}
        for item in items:
            for tag in item.tags:
                by_tag.setdefault(tag, []).append(item)
        rows = [summarize("overall", items)]
        rows += [summarize(tag, by_tag[tag]) for tag in sorted(by_tag)] if SHOW_TAGS else []
        for figures in rows:
            name = label if figures.tool == "overall" else f"  tag {figures.tool}"
            print(
                f"  {name:<22} {figures.questions:>3} q  recall@{k} {figures.recall:.3f}  "
                f"MRR {figures.mrr:.3f}  nDCG@{k} {figures.ndcg:.3f}"
                + (f"  p50 {statistics.median(times[label]):.1f} ms" if name == label else "")
            )
    first, last = levers[0][0], levers[-1][0]
    tests = {t.metric: t for t in compare_scores(scores[first], scores[last])}
    print(
        f"  {last} against {first}: recall p = {tests['recall'].p_value:.3f}, "
        f"MRR p = {tests['mrr'].p_value:.3f} (paired permutation)",
        flush=True,
    )


SHOW_TAGS = False


def engine_cost(size: int, rounds: int, backend: str | None) -> None:
    """The engine's part of a ranked memory search at `size` memories (the memory bench's
    corpus, vectors cached): the page, count and floor note as the tool asks them, the query
    embedded beforehand, each lever setting in turn for every query (shuffled), p50 of the
    wall time and of the paired difference to the levers off."""
    import random

    from bench_corpus import cached_vectors, passages
    from memory_bench import CachedEmbedder, make_memories

    from scoperag.core.config.settings import Settings
    from scoperag.core.contracts.memory import COLLECTION, TIME_KEY, current_memories
    from scoperag.core.filters.fields import build_filter
    from scoperag.pipelines.memories import store_memories
    from scoperag.retrievers.named_dates import named_date
    from scoperag.retrievers.ranked import ranked_page
    from scoperag.retrievers.searches import HybridSearch, TextQuery
    from scoperag.server.runtime import Runtime

    corpus = passages(size)
    texts = [p.text for p in corpus]
    settings = Settings(data_dir=Path(tempfile.mkdtemp()), backend=backend, profiles=["memory"])
    embedder = CachedEmbedder(settings)
    embedder.use_cache(texts, cached_vectors(texts, embedder, log=False))
    runtime = Runtime(settings, embedder=embedder)
    store_memories(runtime.backend, embedder, make_memories(texts, [p.source for p in corpus]))
    queries = [f"{q} in March 2025" for q in COST_QUERIES] + COST_QUERIES
    vectors = {q: embedder.embed_query(q) for q in queries}
    flt = build_filter([], {}, current_memories(time.time(), False, False))
    settings_by_name = {
        "levers off": (False, False),
        "bm25 candidates": (True, False),
        "bm25 candidates + date": (True, True),
    }
    wall: dict[str, list[float]] = {name: [] for name in settings_by_name}
    rng = random.Random(5)
    for round_ in range(rounds + 1):  # round 0 warms up
        for query in queries:
            order = list(settings_by_name)
            rng.shuffle(order)
            for name in order:
                union, dates = settings_by_name[name]
                search = HybridSearch(
                    runtime.backend, embedder, COLLECTION, flt, 10, with_payload=True
                )
                search.keyword_candidates = union
                search.date_boost = named_date(query, TIME_KEY) if dates else None
                started = time.perf_counter()
                ranked_page(search, TextQuery(query, vectors[query]), FLOOR, 1000)
                if round_:
                    wall[name].append((time.perf_counter() - started) * 1000)
    base = wall["levers off"]
    print(f"engine cost of a ranked memory search at {size} memories ({runtime.backend.name}):")
    for name, times in wall.items():
        extra = statistics.median(t - b for t, b in zip(times, base, strict=True))
        print(f"  {name:<24} p50 {statistics.median(times):.2f} ms  paired +{extra:.2f} ms")
    runtime.close()


FLOOR = 0.2  # the memory search's default min_similarity (a cosine)
COST_QUERIES = [
    "How does Elizabeth feel about Mr. Darcy?",
    "a spell that deals fire damage in a cone",
    "How do I encrypt a PDF file with a password?",
    "What does the dragon's breath weapon do?",
    "Why did Lydia run away with Wickham?",
    "page labels and the number tree",
]


def main() -> None:
    global SHOW_TAGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="Folder of the sets' stores.")
    parser.add_argument("--sets", default=",".join(SETS), help="Comma-separated set names.")
    parser.add_argument("--backend", choices=["local", "edge"], default=None)
    parser.add_argument("--tags", action="store_true", help="Figures per question tag too.")
    parser.add_argument(
        "--engine-cost", type=int, metavar="N", help="Only the engine's cost at N memories."
    )
    parser.add_argument("--rounds", type=int, default=20, help="--engine-cost rounds.")
    args = parser.parse_args()
    SHOW_TAGS = args.tags
    if args.engine_cost:
        engine_cost(args.engine_cost, args.rounds, args.backend)
        return

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
