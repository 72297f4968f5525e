"""Fault campaign: SIGKILLs at random moments of an import and of an ingest, and malformed files.

Each kill runs the real `scoperag` CLI in a process of its own and kills it with SIGKILL at a
random moment once it has begun writing; then the store is read again (`scoperag check`, a
count) and the command is run again to the end. Each malformed file is a scoperag export
damaged one way, imported through the CLI. Printed per case and in all:

- served: after the kill, the store opened and answered (every collection readable);
- refused: a file (or a line of it) refused with a clear error naming the file and line,
  never a traceback;
- recovered: running the killed command again converged (every point of the file stored once,
  `scoperag check` clean, the stopped import's record gone);
- lost: acknowledged points missing after a kill or after the rerun (must be 0).

    python evals/fault_campaign.py                        # 5 import kills, 5 ingest kills
    python evals/fault_campaign.py --kills 10 --points 20000
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
SCOPERAG = str(Path(sys.executable).with_name("scoperag"))
WORDS = ["deploy", "staging", "database", "release", "rollback", "token", "cache", "index"]
EMBEDDER = {
    "provider": "local",
    "model": "sentence-transformers/all-MiniLM-L6-v2",
    "dimension": 384,
}


def write_export(path: Path, count: int, seed: int = 7) -> None:
    """A scoperag export of `count` memories (realistic payloads, random unit vectors, BM25)."""
    import numpy as np

    from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
    from scoperag.pipelines.memories import make_memory, memory_point
    from scoperag.server.transfer.formats import ExportHeader, point_line

    rng, vectors = random.Random(seed), np.random.default_rng(seed)
    header = ExportHeader(
        profile="memory",
        collection="memories",
        embedder=EMBEDDER,
        points=count,
        metadata={EMBEDDER_KEY: EMBEDDER},
    )
    with path.open("w", encoding="utf-8") as file:
        file.write(header.model_dump_json() + "\n")
        for n in range(count):
            text = " ".join(rng.choices(WORDS, k=rng.randint(8, 30))) + f" (#{n})"
            memory = make_memory(text, rng.sample(WORDS, 2), "note", 1_700_000_000 + n, {"n": n})
            memory.created_order = n + 1
            vector = vectors.standard_normal(384)
            point = memory_point(memory, (vector / np.linalg.norm(vector)).tolist(), True)
            file.write(point_line(point) + "\n")


def write_memories(path: Path, count: int, first: int = 0) -> None:
    """A memories file for `scoperag ingest memory` (`count` distinct memories)."""
    rng = random.Random(first)
    items = [
        {"content": " ".join(rng.choices(WORDS, k=12)) + f" (memory {n})", "tags": ["fault"]}
        for n in range(first, first + count)
    ]
    path.write_text(json.dumps({"memories": items}), encoding="utf-8")


def cli(data_dir: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "memory"}
    return subprocess.run(
        [SCOPERAG, *arguments], env=env, capture_output=True, text=True, check=False
    )


def killed(
    data_dir: Path,
    arguments: list[str],
    begun: Callable[[], bool],
    rng: random.Random,
    within: float = 2.5,
) -> bool:
    """Run `scoperag ARGUMENTS`, SIGKILL it at a random moment in the `within` seconds after
    `begun()`; whether it was still running when killed."""
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "memory"}
    process = subprocess.Popen(
        [SCOPERAG, *arguments], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    while not begun() and process.poll() is None:
        time.sleep(0.05)
    time.sleep(rng.uniform(0.0, within))
    alive = process.poll() is None
    if alive:
        process.send_signal(signal.SIGKILL)
    process.wait()
    return alive


def count(data_dir: Path) -> int:
    from scoperag.core.engine.edge.backend import EdgeBackend

    backend = EdgeBackend.open(data_dir / "edge")
    try:
        return backend.count("memories", None) if backend.collection_exists("memories") else 0
    finally:
        backend.close()


def acknowledged(data_dir: Path) -> int:
    """Points the killed import recorded as acknowledged by the engine."""
    from scoperag.server.transfer.unfinished import stopped_imports

    return sum(record.points for record in stopped_imports(data_dir))


def import_kill(
    folder: Path, export: Path, points: int, rng: random.Random, within: float = 2.5
) -> dict:
    """A kill in the `within` seconds after the import's first page is written."""
    data_dir = folder / "data"
    records = data_dir / "imports"
    begun = lambda: any(records.glob("*.json"))  # noqa: E731
    alive = killed(data_dir, ["import", str(export)], begun, rng, within)
    outcome = {"killed": alive, "acknowledged": acknowledged(data_dir)}
    after = cli(data_dir, "check", "--json")
    report = json.loads(after.stdout) if after.stdout.startswith("{") else {}
    readable = all(not c["problems"] for c in report.get("collections", []))
    outcome["served"] = bool(report) and readable
    outcome["reported"] = any("stopped after line" in p for p in report.get("problems", []))
    outcome["points_after_kill"] = count(data_dir)
    again = cli(data_dir, "import", str(export), "--json")
    final = count(data_dir)
    clean = cli(data_dir, "check").returncode == 0
    outcome["recovered"] = again.returncode == 0 and final == points and clean
    outcome["lost"] = max(0, outcome["acknowledged"] - outcome["points_after_kill"]) + (
        points - final
    )
    return outcome


def ingest_kill(folder: Path, count_: int, rng: random.Random) -> dict:
    data_dir = folder / "data"
    folder.mkdir(parents=True, exist_ok=True)
    base, batch = folder / "base.json", folder / "batch.json"
    write_memories(base, 20, first=10**6)
    write_memories(batch, count_)
    assert cli(data_dir, "ingest", "memory", str(base)).returncode == 0
    acknowledged_ = count(data_dir)
    collection = data_dir / "edge" / "memories" / "shard" / "scoperag-ledger.json"
    sequence = json.loads(collection.read_text())["sequence"]

    def begun() -> bool:
        try:
            return json.loads(collection.read_text())["sequence"] > sequence
        except (OSError, ValueError):
            return False

    alive = killed(data_dir, ["ingest", "memory", str(batch)], begun, rng, within=1.0)
    after = cli(data_dir, "check", "--json")
    report = json.loads(after.stdout) if after.stdout.startswith("{") else {}
    held = count(data_dir)
    again = cli(data_dir, "ingest", "memory", str(batch))
    final = count(data_dir)
    return {
        "killed": alive,
        "served": after.returncode == 0 and bool(report),
        "points_after_kill": held,
        "recovered": again.returncode == 0 and final == acknowledged_ + count_,
        "lost": max(0, acknowledged_ - held) + max(0, acknowledged_ + count_ - final),
    }


def _nan_vector(lines: list[dict]) -> None:
    lines[1]["dense"] = base64.b64encode(struct.pack("<f", float("nan")) * 384).decode()


# kind -> (the damage, points of the 5 that must be written: None when the file is refused)
MALFORMED: dict[str, tuple[Callable[[list[dict]], object], int | None]] = {
    "header version": (lambda lines: lines[0].update(version=9), None),
    "header profile": (lambda lines: lines[0].update(profile="nope"), None),
    "header metadata embedder": (
        lambda lines: lines[0]["metadata"]["scoperag_embedder"].update(dimension=512),
        None,
    ),
    "header index type": (lambda lines: lines[0]["indexes"].update(tags="tree"), None),
    "header encoding": (lambda lines: lines[0].update(dense_encoding="hex"), None),
    "negative id": (lambda lines: lines[1].update(id=-1), 4),
    "NaN vector": (_nan_vector, 4),
    "short vector": (lambda lines: lines[1].update(dense=[0.1] * 3), 4),
    "negative sparse index": (
        lambda lines: lines[1]["sparse"]["indices"].__setitem__(0, -1),
        4,
    ),
    "payload version text": (lambda lines: lines[1]["payload"].update(version="two"), 4),
    "payload tags numbers": (lambda lines: lines[1]["payload"].update(tags=[1, 2]), 4),
    "payload without content": (lambda lines: lines[1]["payload"].pop("content"), 4),
    "duplicate id": (lambda lines: lines.append(dict(lines[2])), 5),
}
RAW: dict[str, tuple[Callable[[bytes], bytes], int | None]] = {
    "byte-order mark": (lambda data: b"\xef\xbb\xbf" + data, 5),
    "byte not UTF-8": (lambda data: data.replace(b'"payload"', b'"pay\xffload"', 1), 4),
    "truncated gzip": (lambda data: gzip.compress(data)[: len(gzip.compress(data)) // 2], None),
    "gzip bomb (one line of 64 MiB)": (lambda data: gzip.compress(b" " * (64 << 20)), None),
}


def malformed(folder: Path, export: Path) -> dict[str, dict]:
    """Each damaged file imported into a fresh data dir: how it was refused, what was written."""
    lines = export.read_text(encoding="utf-8").splitlines()
    outcomes = {}
    for name, (damage, good) in [*MALFORMED.items(), *RAW.items()]:
        data_dir, path = folder / name.replace(" ", "-") / "data", folder / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        if name in MALFORMED:
            decoded = [json.loads(line) for line in lines]
            damage(decoded)  # type: ignore[arg-type]
            path.write_text("".join(json.dumps(d) + "\n" for d in decoded), encoding="utf-8")
        else:
            path.write_bytes(damage(("\n".join(lines) + "\n").encode()))  # type: ignore[arg-type]
        done = cli(data_dir, "import", str(path), "--json")
        report = json.loads(done.stdout) if done.returncode == 0 else {}
        said = report.get("refused") or done.stderr.strip().splitlines()[-1:] or [""]
        clear = (
            "Traceback" not in done.stderr
            and "Aborted!" not in done.stderr
            and (done.returncode == 0 or ("line " in done.stderr and str(path) in done.stderr))
        )
        written = count(data_dir) if (data_dir / "edge").exists() else 0
        outcomes[name] = {
            "exit": done.returncode,
            "clear": clear,
            "refused": done.returncode != 0 or report.get("refused_count", 0) > 0,
            "written": written,
            "lost": 0 if good is None else max(0, good - written),
            "says": said[0][:160],
        }
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=5, help="Kills of each command.")
    parser.add_argument("--points", type=int, default=20_000, help="Points of the import file.")
    parser.add_argument("--memories", type=int, default=1_000, help="Memories ingested.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--within", type=float, default=20.0, help="Import kills: seconds after the first page."
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    totals = {"served": 0, "refused": 0, "recovered": 0, "lost": 0}
    with tempfile.TemporaryDirectory(prefix="fault-campaign-") as folder:
        root = Path(folder)
        export = root / "memories.jsonl"
        write_export(export, args.points)
        print(f"## kills during `scoperag import` of {args.points} points")
        for n in range(args.kills):
            outcome = import_kill(root / f"import-{n}", export, args.points, rng, args.within)
            print(json.dumps(outcome))
            totals["served"] += outcome["served"]
            totals["recovered"] += outcome["recovered"]
            totals["lost"] += outcome["lost"]
        print(f"## kills during `scoperag ingest memory` of {args.memories} memories")
        for n in range(args.kills):
            outcome = ingest_kill(root / f"ingest-{n}", args.memories, rng)
            print(json.dumps(outcome))
            totals["served"] += outcome["served"]
            totals["recovered"] += outcome["recovered"]
            totals["lost"] += outcome["lost"]
        print("## malformed files (5 points each)")
        small = root / "small.jsonl"
        write_export(small, 5, seed=3)
        outcomes = malformed(root / "malformed", small)
        for name, outcome in outcomes.items():
            print(f"{name}: {json.dumps(outcome)}")
            totals["refused"] += outcome["refused"] and outcome["clear"]
            totals["lost"] += outcome["lost"]
        unclear = [name for name, outcome in outcomes.items() if not outcome["clear"]]
    kills = 2 * args.kills
    kinds = len(MALFORMED) + len(RAW)
    print(
        f"{kills} kills, {kinds} malformed-file kinds: served {totals['served']}/{kills}, "
        f"refused clearly {totals['refused']}/{kinds} (unclear: {unclear or 'none'}), recovered "
        f"{totals['recovered']}/{kills}, lost {totals['lost']}"
    )


if __name__ == "__main__":
    main()
