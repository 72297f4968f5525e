"""Benchmark corpus: up to ~100k passages of real text from shared/data, embedded once and cached.

Passages are windows of consecutive clauses (40-160 characters, about one sentence) of the book,
the Open5e entries and the PDFs: distinct texts in a fixed shuffled order, so the 10k corpus is the
first 10k of the 100k one. Vectors
are cached under `evals/cache/` in blocks of `BLOCK` passages keyed by the embedder and the block's
texts, so a repeat run (or a run of another size) embeds nothing it has embedded before.

Run `python evals/bench_corpus.py --size 100000` once in the background to fill the cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
CACHE = REPO / "evals" / "cache"
BLOCK = 2000
MAX_WINDOW = 6
MIN_CHARS, MAX_CHARS = 40, 160  # sentence-sized texts: ~280 embedded per second on 2 cores
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_CLAUSE_END = re.compile(r"(?<=[,;:])\s+")


@dataclass(frozen=True)
class Passage:
    """A benchmark text and the shared/data source it was cut from."""

    text: str
    source: str  # "book", "dnd" or "pdf"


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if len(s.strip()) > 20]


def _clauses(sentences: list[str]) -> list[str]:
    return [clause for sentence in sentences for clause in _CLAUSE_END.split(sentence)]


def _book_sentences() -> list[str]:
    path = SHARED / "books" / "pg1342-pride-and-prejudice.txt"
    return _sentences(path.read_text(encoding="utf-8-sig"))


def _strings(value: object) -> list[str]:
    """Every string inside a fixture value (Open5e keeps actions as JSON inside strings)."""
    if isinstance(value, str):
        if value.startswith(("[{", "{")):
            try:
                return _strings(json.loads(value))
            except json.JSONDecodeError:
                pass
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _dnd_sentences() -> list[str]:
    sentences: list[str] = []
    for path in sorted((SHARED / "dnd").glob("*/*.json")):
        items = json.loads(path.read_text(encoding="utf-8"))
        for item in items if isinstance(items, list) else []:
            for text in _strings(item.get("fields", {})):
                if len(text) > 40:
                    sentences += _sentences(text)
    return sentences


def _pdf_sentences() -> list[str]:
    from pypdf import PdfReader

    sentences: list[str] = []
    for path in sorted((SHARED / "pdf").glob("*.pdf")):
        pages = PdfReader(path).pages
        sentences += _sentences(" ".join(page.extract_text() or "" for page in pages))
    return sentences


@cache
def passages(size: int) -> list[Passage]:
    """The first `size` passages (clause windows, shuffled with a fixed seed)."""
    if not SHARED.is_dir():
        sys.exit(f"{SHARED} is missing: the benchmark corpus is cut from shared/data")
    sentences = {"book": _book_sentences(), "dnd": _dnd_sentences(), "pdf": _pdf_sentences()}
    sources = {source: _clauses(found) for source, found in sentences.items()}
    seen: set[str] = set()
    pool: list[Passage] = []
    for width in range(1, MAX_WINDOW + 1):
        for source, clauses in sources.items():
            for start in range(len(clauses) - width + 1):
                text = " ".join(clauses[start : start + width])
                if MIN_CHARS <= len(text) <= MAX_CHARS and text not in seen:
                    seen.add(text)
                    pool.append(Passage(text, source))
    if size > len(pool):
        sys.exit(f"--size {size} is more than the {len(pool)} distinct passages available")
    random.Random(7).shuffle(pool)
    return pool[:size]


def _block_path(model_key: str, texts: list[str]) -> Path:
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    return CACHE / model_key / f"{len(texts)}-{digest}.npy"


def cached_vectors(texts: list[str], embedder: object, log: bool = False) -> np.ndarray:
    """float32 [len(texts), dim] vectors, embedding only the blocks not cached yet."""
    info = embedder.info  # type: ignore[attr-defined]
    model_key = re.sub(r"[^A-Za-z0-9.-]+", "_", f"{info.provider}-{info.model}-{info.dimension}")
    blocks = []
    for start in range(0, len(texts), BLOCK):
        chunk = texts[start : start + BLOCK]
        path = _block_path(model_key, chunk)
        if not path.exists():
            began = time.perf_counter()
            vectors = np.asarray(embedder.embed_texts(chunk), dtype=np.float32)  # type: ignore[attr-defined]
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path.with_suffix(".tmp.npy"), vectors)
            path.with_suffix(".tmp.npy").rename(path)
            if log:
                rate = len(chunk) / (time.perf_counter() - began)
                print(
                    f"embedded {start + len(chunk)}/{len(texts)} ({rate:.0f} texts/s)", flush=True
                )
        blocks.append(np.load(path))
    return np.concatenate(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    args = parser.parse_args()
    from scoperag.core.config.settings import Settings
    from scoperag.core.embedding.embedders import Embedder

    texts = [p.text for p in passages(args.size)]
    print(f"{len(texts)} passages, mean {np.mean([len(t) for t in texts]):.0f} chars", flush=True)
    vectors = cached_vectors(texts, Embedder(Settings()), log=True)
    print(f"cached {vectors.shape} under {CACHE}")


if __name__ == "__main__":
    main()
