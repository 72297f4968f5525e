"""Known-page questions over the shared PDFs through `qdrant-find`: hit@5, hybrid against dense.

evals/data/pdf_known_pages.json holds the questions (committed), each with the page that
answers it: "kept" ones repeat a sentence of the page word for word (`--make-dataset` picks
them deterministically: 8-30 words, found on no other page of the document); "paraphrased"
ones, written by hand, ask for the same content in other words. Every question goes through
the MCP tool twice, interleaved: as it runs (hybrid: dense + BM25 fused by the engine) and
with the keyword half switched off (dense only). It prints hit@5 per kind and engine mode,
and the p50/p95 of the tool calls (this machine is shared: read latencies as pessimistic).

    python evals/pdf_known_pages.py [--backend local|edge]
    python evals/pdf_known_pages.py --make-dataset    # rewrite the "kept" questions

The same questions as a `scoperag eval` file (hybrid only, no latencies):
evals/questions/pdf_known_pages.jsonl, written by evals/make_questions.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any
from unittest import mock

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

PDF_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pdf"
DATASET = Path(__file__).resolve().parent / "data" / "pdf_known_pages.json"
KEPT_PER_DOCUMENT = {  # questions drawn from each document (the pages it has text on allowing)
    "GeoTopo-komprimiert": 22,
    "qpdf-manual-5.1.3": 20,
    "cython-reference-guide-0.29a0": 5,
    "data-in-brief-22-sanni-page4": 2,
}
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _plain(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def kept_questions(seed: int = 14) -> list[dict[str, Any]]:
    """Sentences of the pages, word for word, each found on its page only."""
    from scoperag.pipelines.pdf import read_pdf

    rng = random.Random(seed)
    questions = []
    for path in sorted(PDF_DIR.glob("*.pdf")):
        pdf = read_pdf(path)
        wanted = KEPT_PER_DOCUMENT.get(pdf.document_id, 0)
        pages = [_plain(text or "") for text in pdf.texts]
        candidates = []
        for index, text in enumerate(pdf.texts):
            for sentence in _SENTENCE.split(" ".join((text or "").split())):
                words = sentence.split()
                alpha = sum(ch.isalpha() for ch in sentence) / max(len(sentence), 1)
                plain = _plain(sentence)
                unique = sum(plain in page for page in pages) == 1
                if 8 <= len(words) <= 30 and alpha > 0.7 and unique:
                    candidates.append((index, sentence))
        by_page: dict[int, list[str]] = defaultdict(list)
        for index, sentence in candidates:
            by_page[index].append(sentence)
        for index in sorted(rng.sample(sorted(by_page), min(wanted, len(by_page)))):
            question = rng.choice(by_page[index])
            questions.append(
                {
                    "kind": "kept",
                    "document_id": pdf.document_id,
                    "page": index,
                    "question": question,
                }
            )
    return questions


async def run(runtime: Any, questions: list[dict[str, Any]]) -> None:
    from fastmcp import Client

    from scoperag.retrievers.searches import HybridSearch
    from scoperag.server.mcp.app import build_server

    hits: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    latency: dict[str, list[float]] = defaultdict(list)
    dense_only = mock.patch.object(HybridSearch, "keyword_text", lambda self, query: None)
    async with Client(build_server(runtime)) as client:
        for case in questions * 2:  # the first round warms up; the second is measured
            for mode in ("hybrid", "dense"):
                typed = "".join(ch if ch.isprintable() else " " for ch in case["question"])
                arguments = {"query": typed, "limit": 5}  # as typed: no control characters
                started = time.perf_counter()
                if mode == "dense":
                    with dense_only:
                        result = await client.call_tool("qdrant-find", arguments)
                else:
                    result = await client.call_tool("qdrant-find", arguments)
                latency[mode].append((time.perf_counter() - started) * 1000)
                found = {
                    (hit["document_id"], hit["physical_page_index"])
                    for hit in result.structured_content["hits"]
                }
                figures = hits[(mode, case["kind"])]
                figures[0] += (case["document_id"], case["page"]) in found
                figures[1] += 1
    for mode in ("hybrid", "dense"):
        kinds = {kind: hits[(mode, kind)] for m, kind in hits if m == mode}
        good, asked = (sum(f[i] for f in kinds.values()) // 2 for i in (0, 1))
        detail = ", ".join(f"{k} {f[0] // 2}/{f[1] // 2}" for k, f in sorted(kinds.items()))
        measured = latency[mode][len(latency[mode]) // 2 :]
        p95 = sorted(measured)[int(len(measured) * 0.95)]
        print(
            f"{mode:<6} hit@5 {good}/{asked} = {good / asked:.3f} ({detail}); tool call p50 "
            f"{statistics.median(measured):.1f} ms, p95 {p95:.1f} ms"
        )
    ratio = statistics.median(latency["hybrid"]) / statistics.median(latency["dense"])
    print(f"hybrid / dense p50: {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["local", "edge"], default=None)
    parser.add_argument("--store", type=Path, default=None, help="Data dir to keep or reuse.")
    parser.add_argument("--make-dataset", action="store_true", help="Rewrite 'kept' questions.")
    args = parser.parse_args()
    stored = json.loads(DATASET.read_text(encoding="utf-8")) if DATASET.is_file() else []
    if args.make_dataset:
        questions = kept_questions() + [q for q in stored if q["kind"] != "kept"]
        DATASET.write_text(json.dumps(questions, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {len(questions)} questions to {DATASET}")
        return

    from bench_timing import TimedEmbedder  # every question embedded in both modes

    from scoperag.core.config.settings import Settings
    from scoperag.server.profiles.pdf.service import ingest_paths
    from scoperag.server.runtime import Runtime

    store = args.store or Path(tempfile.mkdtemp(prefix="pdf-pages-"))
    settings = Settings(data_dir=store, profiles=["pdf"], backend=args.backend)
    runtime = Runtime(settings, embedder=TimedEmbedder(settings))
    if runtime.backend.collection_exists(runtime.settings.pdf_collection):
        print(f"reusing the store in {store}")
    else:
        ingest_paths(runtime, [PDF_DIR], None, None)
    print(f"engine {runtime.backend.name}: {len(stored)} questions")
    asyncio.run(run(runtime, stored))
    runtime.close()


if __name__ == "__main__":
    main()
