"""Every filter combination of `qdrant-find` over the sample PDFs: precision and recall.

For each page of each PDF, the three filters (document_id, physical_page_index, page_label)
alone, in pairs and all together go through the MCP tool (in-memory FastMCP client). The truth
comes from the PDFs themselves (pypdf text, labels from the /PageLabels tree).
Precision: hits that satisfy every filter / hits. Recall: expected pages found / expected pages,
over the calls whose expected pages fit in one answer (document-only calls count for precision).

    python evals/filter_accuracy.py [PDF_DIR]   # default ../shared/data/pdf, else the samples
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import tempfile
import time
from pathlib import Path

from fastmcp import Client

from scoperag.core.config.settings import Settings
from scoperag.pipelines.pdf import read_pdf
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.pdf.service import ingest_paths
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES

FILTERS = ("document_id", "physical_page_index", "page_label")
LIMIT = 100


def _pdf_dir() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    shared = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "pdf"
    return shared if shared.is_dir() else SAMPLES


async def main() -> None:
    pdf_dir = _pdf_dir()
    pages = []  # (document_id, index, label, has_text)
    for path in sorted(pdf_dir.glob("*.pdf")):
        pdf = read_pdf(path)
        for index, (label, text) in enumerate(zip(pdf.labels, pdf.texts, strict=True)):
            pages.append((pdf.document_id, index, label, bool(text)))
    runtime = Runtime(Settings(data_dir=Path(tempfile.mkdtemp()), profiles=["pdf"]))
    started = time.perf_counter()
    ingest_paths(runtime, [pdf_dir], None, None)
    print(f"ingested {len(pages)} pages from {pdf_dir} in {time.perf_counter() - started:.1f} s")

    cases = {
        tuple(combo)
        for doc, index, label, _ in pages
        for size in (1, 2, 3)
        for combo in itertools.combinations(zip(FILTERS, (doc, index, label), strict=True), size)
    }
    hits_total = hits_ok = expected_total = expected_found = 0
    latencies = []
    async with Client(build_server(runtime)) as client:
        for case in sorted(cases, key=str):
            arguments = dict(case)
            expected = {
                (doc, index)
                for doc, index, label, has_text in pages
                if has_text
                and all(
                    {"document_id": doc, "physical_page_index": index, "page_label": label}[k] == v
                    for k, v in arguments.items()
                )
            }
            t0 = time.perf_counter()
            result = await client.call_tool(
                "qdrant-find", {"query": "what is on this page", "limit": LIMIT, **arguments}
            )
            latencies.append(time.perf_counter() - t0)
            hits = result.structured_content["hits"]
            found = {(h["document_id"], h["physical_page_index"]) for h in hits}
            hits_total += len(hits)
            hits_ok += sum(all(h[k] == v for k, v in arguments.items()) for h in hits)
            if len(expected) <= 10:
                expected_total += len(expected)
                expected_found += len(found & expected)
    runtime.close()
    latencies.sort()
    print(f"calls: {len(cases)} filter combinations through qdrant-find")
    print(f"precision: {hits_ok / hits_total:.4f} ({hits_ok}/{hits_total} hits match every filter)")
    print(f"recall:    {expected_found / expected_total:.4f} ({expected_found}/{expected_total})")
    p50 = latencies[len(latencies) // 2] * 1000
    p95 = latencies[int(len(latencies) * 0.95)] * 1000
    print(f"tool call latency: p50 {p50:.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
