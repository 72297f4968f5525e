"""Concurrent re-ingestion: processes replacing the same and different PDFs while readers query.

    python evals/concurrent_ingest.py [--rounds 6] [--writers 2]

This process owns the store (embedded Qdrant Edge). Each round starts `--writers` processes of
`scoperag ingest pdf` at once (attached to this owner): in "same" rounds they all replace one
document from one PDF, in "different" rounds each replaces its own document. Two reader threads
meanwhile look at every document stored so far: the generations its points come from (more than
one is a mix) and its count (zero for a document ingested before is an empty read). At the end
every document must hold exactly one whole version. Prints counts: ingest calls, refusals
(failed calls), losses, mixes, empty reads, reads.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import threading
from pathlib import Path

from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.engine.generations import GENERATION_KEY
from scoperag.server.profiles.pdf.service import ingest_paths
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES

PDFS = [*sorted(SAMPLES.glob("*.pdf")), *sorted(Path("/work/shared/data/pdf").glob("c*.pdf"))]


def _of(document: str) -> models.Filter:
    match = models.MatchValue(value=document)
    return models.Filter(must=[models.FieldCondition(key="document_id", match=match)])


class Readers:
    """Threads reading every stored document until stopped, counting what they saw."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime, self.stored = runtime, set[str]()
        self.reads = self.mixes = self.empty = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._read) for _ in range(2)]

    def _read(self) -> None:
        backend, collection = self.runtime.backend, self.runtime.settings.pdf_collection
        while not self._stop.is_set():
            for document in sorted(self.stored):
                generations = backend.facet(collection, GENERATION_KEY, _of(document), 10)
                self.reads += 1
                self.mixes += len(generations) > 1
                self.empty += not generations

    def __enter__(self) -> Readers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()


def _chunks(runtime: Runtime, pdf: Path, document: str) -> int:
    """How many chunks one version of `pdf` has (ingested alone under a scratch id)."""
    ingest_paths(runtime, [pdf], document, None)
    return runtime.backend.count(runtime.settings.pdf_collection, _of(document))


def main(rounds: int, writers: int) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="concurrent-ingest-"))
    settings = Settings(data_dir=data_dir, profiles=["pdf"])
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "pdf"}
    runtime = Runtime(settings)
    chunks = {pdf: _chunks(runtime, pdf, f"scratch-{n}") for n, pdf in enumerate(PDFS)}
    calls = refusals = 0
    expected: dict[str, int] = {}
    script = str(Path(__file__).resolve().parents[1] / ".venv" / "bin" / "scoperag")
    with Readers(runtime) as readers:
        for n in range(rounds):
            same = n % 2 == 0
            jobs = [
                (PDFS[n % len(PDFS)], "shared") if same else (PDFS[w % len(PDFS)], f"own-{w}")
                for w in range(writers)
            ]
            processes = [
                subprocess.Popen([script, "ingest", "pdf", str(pdf), "--document-id", document],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                for pdf, document in jobs
            ]  # fmt: skip
            for (pdf, document), process in zip(jobs, processes, strict=True):
                calls += 1
                _, error = process.communicate()
                if process.returncode:
                    refusals += 1
                    print(f"  refused: {document} ({error.decode().strip()[-200:]})")
                    continue
                expected[document] = chunks[pdf]  # same rounds: one PDF, so any finisher
                readers.stored.add(document)
            print(f"round {n + 1} ({'same' if same else 'different'}): done")
    collection = settings.pdf_collection
    losses = 0
    for document, count in expected.items():
        generations = runtime.backend.facet(collection, GENERATION_KEY, _of(document), 10)
        whole = len(generations) == 1 and sum(generations.values()) == count
        losses += not whole
        if not whole:
            print(f"  lost or mixed at the end: {document}: {generations} (expected {count})")
    runtime.close()
    print(
        f"\ningest calls {calls}, refusals {refusals}, losses {losses}, mixes "
        f"{readers.mixes}, empty reads {readers.empty}, reads {readers.reads}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--writers", type=int, default=2)
    arguments = parser.parse_args()
    main(arguments.rounds, arguments.writers)
