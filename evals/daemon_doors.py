"""The doors to the resident engine, measured in real processes: a CLI search and `scoperag list`
with a warm resident engine, spawn of `scoperag serve` to `tools/list`, to the first answer and
to the first write (warm, and cold: no resident engine running), five `scoperag serve` started
at once, the memory (PSS) of a door and of the resident engine with five doors, and the
start-up floor of any Python command. Prints each figure, its target and the load average
(ingestion against the encoder: `evals/ingest_throughput.py`).

    flock /tmp/bench.lock python evals/daemon_doors.py            # 5 runs of each
    flock /tmp/bench.lock python evals/daemon_doors.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

SCRIPT = shutil.which("scoperag", path=str(Path(sys.executable).parent)) or "scoperag"
HANDSHAKE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "daemon-doors", "version": "1"},
    },
}


class Door:
    """A `scoperag serve` process spoken to line by line, timed from its spawn."""

    def __init__(self, env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [SCRIPT, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        self.ids = iter(range(2, 1 << 30))

    def send(self, message: dict) -> None:
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def answer(self, method: str, params: dict | None = None) -> tuple[dict, float]:
        """The answer to `method` and the seconds since spawn when it came."""
        number = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": number, "method": method, "params": params or {}})
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == number:
                return message, time.perf_counter() - self.started

    def open(self) -> float:
        self.send(HANDSHAKE)
        while json.loads(self.process.stdout.readline()).get("id") != 1:
            pass
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self.answer("tools/list")[1]

    def call(self, tool: str, **arguments: object) -> tuple[dict, float]:
        return self.answer("tools/call", {"name": tool, "arguments": arguments})

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


def pss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def record(data_dir: Path) -> dict | None:
    try:
        return json.loads((data_dir / "daemon.json").read_text())
    except (OSError, ValueError):
        return None


def stop(env: dict[str, str]) -> None:
    subprocess.run([SCRIPT, "daemon", "stop"], env=env, capture_output=True, check=True)


def wall(env: dict[str, str], *args: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([SCRIPT, *args], env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"scoperag {' '.join(args)} failed: {done.stderr}")
    return time.perf_counter() - started


def seconds(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"
    )


def line(name: str, figure: str, target: str) -> None:
    print(f"{name:<34} {figure:<48} target {target}")


def doors(env: dict[str, str], runs: int, data_dir: Path) -> None:
    stop(env)
    cold_list, cold_answer = [], []
    for _ in range(max(runs // 2, 1)):
        door = Door(env)
        cold_list.append(door.open())
        cold_answer.append(door.call("search", query="embedded engine")[1])
        door.close()
        stop(env)
    line("cold: spawn -> tools/list", seconds(cold_list), "-")
    line("cold: spawn -> first answer", seconds(cold_answer), "<= 4 s")
    wall(env, "list")  # a resident engine, warm
    listed, answered, written = [], [], []
    for number in range(runs):
        door = Door(env)
        listed.append(door.open())
        answered.append(door.call("search", query="embedded engine")[1])
        door.started = time.perf_counter()
        written.append(door.call("store_memory", content=f"door note {number} {time.time()}")[1])
        door.close()
    line("warm: spawn -> tools/list", seconds(listed), "<= 0.3 s")
    line("warm: spawn -> first answer", seconds(answered), "<= 0.5 s")
    line("warm: first write (after list)", seconds(written), "<= 0.5 s")
    searches = [wall(env, "search", "memory", "embedded engine") for _ in range(runs)]
    line("warm: scoperag search memory", seconds(searches), "<= 0.5 s")
    lists = [wall(env, "list") for _ in range(runs)]
    line("warm: scoperag list", seconds(lists), "<= 0.3 s")
    together = [Door(env) for _ in range(5)]
    for door in together:
        door.send(HANDSHAKE)
    firsts = []
    for door in together:
        while json.loads(door.process.stdout.readline()).get("id") != 1:
            pass
        door.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for door in together:
        firsts.append(door.call("search", query="embedded engine")[1])
    alone = statistics.median(answered)
    line(
        "five serves at once: first answer",
        f"max {max(firsts):.3f} s, {max(firsts) / alone:.2f}x one alone ({alone:.3f} s)",
        "<= 1.5x",
    )
    daemon = record(data_dir)["pid"]
    door_pss = [pss_mb(door.process.pid) for door in together]
    total = pss_mb(daemon) + sum(door_pss)
    line("thin serve PSS", f"median {statistics.median(door_pss):.1f} MB", "<= 40 MB")
    line(
        "resident engine + 5 doors PSS",
        f"{total:.0f} MB (engine {pss_mb(daemon):.0f})",
        "<= 500 MB",
    )
    for door in together:
        door.close()


def floor(env: dict[str, str], runs: int) -> None:
    """What any `scoperag` command pays before it does anything: Python's start, the door."""
    python = [wall_python(env, "pass") for _ in range(runs)]
    door = [wall_python(env, "import scoperag.server.daemon.relay") for _ in range(runs)]
    click = [wall_python(env, "import click") for _ in range(runs)]
    line("floor: python -c pass", seconds(python), "-")
    line("floor: + the door's imports", seconds(door), "-")
    line("floor: python -c 'import click'", seconds(click), "-")


def wall_python(env: dict[str, str], code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="daemon-doors-") as folder:
        data_dir = Path(folder) / "data"
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("SCOPERAG_") or k == "SCOPERAG_CACHE_DIR"
        }
        env["SCOPERAG_DATA_DIR"] = str(data_dir)
        where = "from scoperag.server.samples import SAMPLES; print(SAMPLES)"
        found = subprocess.run([sys.executable, "-c", where], capture_output=True, text=True)
        samples = found.stdout.strip()
        wall({**env, "SCOPERAG_IN_PROCESS": "1"}, "ingest", "memory", f"{samples}/memories.json")
        print(f"load average at start {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
        try:
            doors(env, args.runs, data_dir)
        finally:
            stop(env)
        floor(env, args.runs)
        print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
