"""The searches of the memory, pdf, D&D and docs profiles run without LlamaIndex (issue 15).

LlamaIndex's import is 1.2-1.8 s on this machine; a server launched by an MCP client answers
its first search of these profiles without waiting for it (ingestion and the books profile,
whose postprocessors work on nodes, still use it). The searches run in a new process, as a
launched server would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from scoperag.core.embeddings import Embedder
from scoperag.core.settings import Settings
from scoperag.pipelines.dnd import ingest_folders
from scoperag.pipelines.docs import ingest_docs_jsonl
from scoperag.pipelines.memories import import_memories
from scoperag.server.demo import SAMPLES
from scoperag.server.pdf_service import ingest_paths
from scoperag.server.runtime import Runtime

PROBE = """
import asyncio, sys
from fastmcp import Client
from scoperag.server.app import build_server

CALLS = [
    ("search", {"query": "where are reading positions saved?"}, "memories"),
    ("search", {"tags": ["books"], "mode": "tag"}, "memories"),
    ("qdrant-find", {"query": "page labels", "limit": 3}, "hits"),
    ("elf_docs_search_l0", {"query": "release checklist"}, "hits"),
    ("lookup_spell", {"name": "fire ball"}, "results"),
    ("lookup_creature", {}, "results"),
    ("search_dnd_content", {"query": "a dragon breathing fire"}, "results"),
]

async def found():
    async with Client(build_server()) as client:
        return [
            len((await client.call_tool(name, arguments)).structured_content[key])
            for name, arguments, key in CALLS
        ]

print(*asyncio.run(found()), "llama_index.core" in sys.modules)
"""


def test_memory_pdf_dnd_and_docs_searches_import_no_llamaindex(
    tmp_path: Path, embedder: Embedder
) -> None:
    runtime = Runtime(Settings(data_dir=tmp_path, backend="edge"), embedder=embedder)
    ingest_paths(runtime, [SAMPLES / "qpdf-page-labels-num-tree.pdf"], None, None)
    ingest_docs_jsonl(SAMPLES / "docs.jsonl", runtime.backend, embedder)
    import_memories(SAMPLES / "memories.json", runtime.backend, embedder)
    ingest_folders([SAMPLES / "dnd" / "wotc-srd"], runtime.backend, embedder)
    runtime.close()
    environment = {**os.environ, "SCOPERAG_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=environment, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    *counts, imported = done.stdout.split()
    assert all(int(count) > 0 for count in counts) and len(counts) == 7, done.stdout
    assert imported == "False"
