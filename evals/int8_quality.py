"""The local model in int8 (SCOPERAG_EMBED_PRECISION=int8) against fp32 on varied texts: every
bundled sample's chunks and passages (PDF pages, a novel's paragraphs, memories, docs), and the
throughput of each on the same texts in batches.

    flock /tmp/bench.lock python evals/int8_quality.py            # up to 500 texts
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.server.samples import SAMPLES


def texts(limit: int) -> list[str]:
    """Varied texts: sample PDF pages cut in passages, the novel's paragraphs, memories, docs."""
    from pypdf import PdfReader

    found: list[str] = []
    for pdf in sorted(SAMPLES.glob("*.pdf")):
        for page in PdfReader(pdf).pages:
            text = (page.extract_text() or "").strip()
            found += [text[i : i + 800] for i in range(0, len(text), 800) if text[i : i + 800]]
    novel = (SAMPLES / "pride-and-prejudice-ch1-3.txt").read_text()
    found += [p.strip() for p in novel.split("\n\n") if len(p.strip()) > 40]
    found += [m["content"] for m in json.loads((SAMPLES / "memories.json").read_text())["memories"]]
    for line in (SAMPLES / "docs.jsonl").read_text().splitlines():
        found.append(json.loads(line)["text"][:1200])
    step = max(len(found) // limit, 1)
    return found[::step][:limit]


def throughput(embedder: Embedder, batch: list[str]) -> float:
    started = time.perf_counter()
    embedder.embed_texts(batch)
    return len(batch) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=500)
    args = parser.parse_args()
    sample = texts(args.texts)
    with tempfile.TemporaryDirectory() as cache:
        fp32 = Embedder(Settings(cache_dir=Path(cache), embed_precision="fp32"))
        int8 = Embedder(Settings(cache_dir=Path(cache), embed_precision="int8"))
        a, b = np.array(fp32.embed_texts(sample)), np.array(int8.embed_texts(sample))
        cosine = (a * b).sum(axis=1)
        speed = {name: throughput(e, sample[:200]) for name, e in (("fp32", fp32), ("int8", int8))}
    print(
        f"{len(sample)} texts: cosine int8 to fp32 min {cosine.min():.4f}, mean "
        f"{cosine.mean():.4f}, below 0.98: {(cosine < 0.98).sum()}; batches of the first 200: "
        f"fp32 {speed['fp32']:.1f} texts/s, int8 {speed['int8']:.1f} texts/s "
        f"({speed['int8'] / speed['fp32']:.2f}x); load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
