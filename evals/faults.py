"""Resource faults against real `scoperag` processes: a disk filling under a running server,
damaged collection files, slow and numerous HTTP sockets. Prints counts per scenario: calls,
refusals, losses, stall seconds (the longest call), crashes.

    sudo python evals/faults.py      # the disk scenarios mount a tmpfs, so they need root

1. Full disk: `scoperag serve --transport http --profiles memory` on a 300 MiB tmpfs; a writer
   (store_memory) and a reader (search) run while a filler file takes the free space to 200,
   90 (below the 128 MiB floor) and 1 MiB, then is removed. Afterwards every acknowledged
   memory is looked up in the store.
2. Opening at 29 MiB free: `scoperag list` with the default floor and with the floor off.
3. Damage: each kind of damage to one of two collections; `scoperag check` and a search on
   both, each in a fresh process.
4. Slow sockets: 100 sockets dripping request headers a byte a second, 300 idle connections,
   a lower-case `bearer` token; 400 connections to a server allowed 128 file descriptors.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.exceptions import ToolError
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.memory import COLLECTION as MEMORIES
from scoperag.core.engine.disk_space import MIB, MIN_FREE_ENV, free_bytes
from scoperag.server.runtime import Runtime

sys.path.insert(0, str(Path(__file__).parent))
from damage_cases import DAMAGE, build_store  # noqa: E402
from fault_sockets import (  # noqa: E402
    SCOPERAG,
    TOKEN,
    free_port,
    out_of_descriptors,
    serve,
    slow_sockets,
)

PHASES_MIB = (None, 200, 90, 1, None)  # free space the filler leaves per phase (None: no filler)
PHASE_SECONDS = 8


@dataclass
class Counts:
    calls: int = 0
    ok: int = 0
    refusals: int = 0
    errors: list[str] = field(default_factory=list)
    stall: float = 0.0

    def line(self) -> str:
        return (
            f"calls {self.calls}, ok {self.ok}, refusals {self.refusals}, other errors "
            f"{len(self.errors)}, stall {self.stall:.2f} s"
        )


def mounted_tmpfs(size_mib: int) -> Path:
    point = Path(tempfile.mkdtemp(prefix="scoperag-faults-"))
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mib}m", "tmpfs", str(point)], check=True
    )
    return point


def leave_free(disk: Path, mib: int | None) -> None:
    filler = disk / "filler"
    filler.unlink(missing_ok=True)
    if mib is not None:
        with filler.open("wb") as handle:
            os.posix_fallocate(handle.fileno(), 0, max(free_bytes(disk) - mib * MIB, 1))


async def call(client: Client, counts: Counts, tool: str, arguments: dict) -> object:
    counts.calls += 1
    started = time.perf_counter()
    try:
        result = await client.call_tool(tool, arguments)
        counts.ok += 1
        return result
    except ToolError as exc:
        if MIN_FREE_ENV in str(exc):
            counts.refusals += 1
        else:
            counts.errors.append(f"{tool}: {exc}"[:300])
    except Exception as exc:  # noqa: BLE001 - a dead server is what is being counted
        counts.errors.append(f"{tool}: {exc!r}"[:300])
    finally:
        counts.stall = max(counts.stall, time.perf_counter() - started)
    return None


async def full_disk_phases(url: str, disk: Path) -> tuple[list[tuple], list[str]]:
    transport = StreamableHttpTransport(url, headers={"authorization": f"Bearer {TOKEN}"})
    acknowledged: list[str] = []
    rows = []
    async with Client(transport, timeout=120) as client:
        n = 0
        for mib in PHASES_MIB:
            leave_free(disk, mib)
            writes, reads = Counts(), Counts()
            ends = time.monotonic() + PHASE_SECONDS
            while time.monotonic() < ends:
                n += 1
                text = f"memory {n}: the disk filler leaves {mib} MiB " + "words " * 200
                stored = await call(client, writes, "store_memory", {"content": text})
                if stored is not None:
                    acknowledged.append(stored.structured_content["content_hash"])
                await call(client, reads, "search", {"query": f"memory {n}", "page_size": 5})
            rows.append((mib, writes, reads, free_bytes(disk) / MIB))
    return rows, acknowledged


def found(data_dir: Path, hashes: list[str]) -> int:
    runtime = Runtime(Settings(data_dir=data_dir))
    condition = models.FieldCondition(key="content_hash", match=models.MatchAny(any=hashes))
    count = runtime.backend.count(MEMORIES, models.Filter(must=[condition]))
    runtime.close()
    return count


def full_disk() -> None:
    disk = mounted_tmpfs(300)
    data_dir = disk / "data"
    try:
        port = free_port()
        server = serve(data_dir, port, "memory")
        rows, acknowledged = asyncio.run(full_disk_phases(f"http://127.0.0.1:{port}/mcp", disk))
        crashed = server.poll()
        server.send_signal(signal.SIGKILL)
        server.wait()
        leave_free(disk, None)
        print("## 1. disk filling under a running server (floor 128 MiB)")
        for mib, writes, reads, free in rows:
            filler = "no filler" if mib is None else f"filler leaves {mib} MiB"
            print(f"{filler} (free at the end: {free:.0f} MiB):")
            print(f"  writes: {writes.line()}")
            print(f"  reads:  {reads.line()}")
            for error in (writes.errors + reads.errors)[:2]:
                print(f"    e.g. {error}")
        lost = len(acknowledged) - found(data_dir, acknowledged)
        print(
            f"server crashed: {'yes, exit ' + str(crashed) if crashed is not None else 'no'}; "
            f"acknowledged writes {len(acknowledged)}, lost {lost}"
        )
        opening_at_29_mib(disk, data_dir)
    finally:
        subprocess.run(["umount", str(disk)], check=False)
        disk.rmdir()


def opening_at_29_mib(disk: Path, data_dir: Path) -> None:
    print("## 2. `scoperag list` with 29 MiB free")
    for floor in ("128", "0"):
        leave_free(disk, 29)
        env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), MIN_FREE_ENV: floor}
        listed = subprocess.run([SCOPERAG, "list"], env=env, capture_output=True, text=True)
        said = (listed.stderr.strip().splitlines() or ["listed"])[-1][:160]
        print(f"  {MIN_FREE_ENV}={floor}: exit {listed.returncode}: {said}")
        leave_free(disk, None)


READ_BOTH = """
import json, sys
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.search_request import SearchRequest
backend, out = EdgeBackend.open(__import__("pathlib").Path(sys.argv[1])), {}
for name in ("damaged", "intact"):
    try:
        hits = backend.search(SearchRequest(collection=name, dense=[1.0] * 8, limit=5)).hits
        out[name] = {"hits": len(hits), "scores": [h.score for h in hits]}
    except Exception as exc:
        out[name] = {"error": f"{type(exc).__name__}: {exc}"}
print(json.dumps(out))
"""


def damage() -> None:
    print("## 3. damaged collection files (one of two collections)")
    totals = {"cases": 0, "clear errors": 0, "served silently": 0, "crashes": 0, "check found": 0}
    for name, apply in DAMAGE.items():
        with tempfile.TemporaryDirectory() as data_dir:
            root = Path(data_dir) / "edge"
            build_store(root)
            apply(root)
            read = subprocess.run(
                [sys.executable, "-c", READ_BOTH, str(root)], capture_output=True, text=True
            )
            env = {**os.environ, "SCOPERAG_DATA_DIR": data_dir}
            check = subprocess.run([SCOPERAG, "check"], env=env, capture_output=True, text=True)
        totals["cases"] += 1
        totals["check found"] += check.returncode == 1
        if read.returncode != 0:
            totals["crashes"] += 1
            outcome = f"crashed, exit {read.returncode}: {read.stderr.strip()[-120:]}"
        else:
            result = json.loads(read.stdout)
            error = result["damaged"].get("error", "")
            clear = "Collection 'damaged'" in error and str(root / "damaged") in error
            totals["clear errors" if clear else "served silently"] += 1
            intact = result["intact"].get("hits")
            outcome = f"{'clear error' if clear else 'SERVED: ' + str(result['damaged'])[:80]}"
            outcome += f"; intact collection {intact} hits"
        print(f"  {name:<28} {outcome}; check exit {check.returncode}")
    print("  " + ", ".join(f"{key} {value}" for key, value in totals.items()))


def main() -> None:
    if os.geteuid() == 0 and shutil.which("mount"):
        full_disk()
    else:
        print("## 1-2. skipped: mounting a small tmpfs needs root")
    damage()
    slow_sockets()
    out_of_descriptors()


if __name__ == "__main__":
    main()
