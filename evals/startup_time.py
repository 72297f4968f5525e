"""Time from an MCP client launching `scoperag serve` (stdio) to its first answers.

A data dir holding the sample memories and book is prepared once (`scoperag ingest`); then each
run launches a fresh server process and measures, from the launch:
- `tools/list` answered (all five profiles on);
- the first answer of a search WITH a query (`search`, memory profile: needs the model);
- in another launch, the first answer of a query-less search (`search` by tag: no model);
- in a third, the first answer of a spoiler-safe book question (`search_book`, books profile:
  needs the model; a reading position is saved beforehand);
- in a fourth, the first write: `store_memory` of a memory not stored before (the model and
  LlamaIndex's ingestion);
- after the answer with a query, once the warm-up has had `SETTLE_SECONDS` (it imports every
  profile's handlers and loads the model), the resident memory of the server and any process
  it started (Linux: read from /proc).
Prints the median, min and max of each over RUNS runs (targets: first answer <= 3 s,
`tools/list` < 1.5 s).

    python evals/startup_time.py [RUNS]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fastmcp import Client
from fastmcp.client.transports import StdioTransport

SAMPLES = Path(__file__).resolve().parents[1] / "server" / "samples"
WITH_QUERY = {"query": "where are the memories stored?"}
QUERY_LESS = {"tags": ["storage"], "mode": "tag"}
BOOK_ID = "pride"
BOOK_QUESTION = {"book_id": BOOK_ID, "query": "who has taken Netherfield Park?"}
SETTLE_SECONDS = 6.0


def _scoperag() -> str:
    return shutil.which("scoperag", path=str(Path(sys.executable).parent)) or "scoperag"


def _env(data_dir: str) -> dict[str, str]:
    """A `scoperag serve` in process (its own start-up; `evals/daemon_doors.py` times the
    resident engine's doors)."""
    env = {**os.environ, "SCOPERAG_DATA_DIR": data_dir, "FASTMCP_CHECK_FOR_UPDATES": "off"}
    return {**env, "SCOPERAG_IN_PROCESS": "1"}


async def prepare(data_dir: str) -> None:
    """The sample memories and book, stored by processes that exit before the runs, and a
    reader's position in the book (the end of chapter 2), saved through a server."""
    book = ["book", "--book-id", BOOK_ID, str(SAMPLES / "pride-and-prejudice-ch1-3.txt")]
    for command in (["memories", str(SAMPLES / "memories.json")], book):
        subprocess.run(
            [_scoperag(), "ingest", *command], env=_env(data_dir), check=True, capture_output=True
        )
    transport = StdioTransport(command=_scoperag(), args=["serve"], env=_env(data_dir))
    async with Client(transport) as client:
        await client.call_tool("set_reading_position", {"book_id": BOOK_ID, "chapter": 2})


def _started_processes_rss_mb() -> float | None:
    """Resident memory (MB) of the processes this one started and theirs; None without /proc."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    if not parents:
        return None
    family, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - family
        family |= frontier
    kilobytes = 0
    for pid in family:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        kilobytes += sum(int(line.split()[1]) for line in status.splitlines() if "VmRSS" in line)
    return kilobytes / 1024


async def once(
    data_dir: str, arguments: dict, settle: bool = False, tool: str = "search"
) -> tuple[float, float, float | None]:
    """(launch -> tools/list, launch -> the first `tool` answer) in seconds, one new server,
    and (`settle`) its resident memory `SETTLE_SECONDS` after that answer."""
    transport = StdioTransport(command=_scoperag(), args=["serve"], env=_env(data_dir))
    started = time.perf_counter()
    resident = None
    async with Client(transport) as client:
        await client.list_tools()
        listed = time.perf_counter() - started
        result = await client.call_tool(tool, arguments)
        answered = time.perf_counter() - started
        if settle:
            await asyncio.sleep(SETTLE_SECONDS)
            resident = _started_processes_rss_mb()
    if not result.content:
        raise SystemExit(f"{tool} {arguments} gave no answer")
    return listed, answered, resident


def _line(label: str, values: list[float]) -> str:
    return (
        f"{label:<48} median {statistics.median(values):5.2f} s "
        f"(min {min(values):.2f}, max {max(values):.2f})"
    )


async def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    data_dir = tempfile.mkdtemp(prefix="scoperag-startup-")  # left for the OS: servers still
    # closing after the last client exits must find it
    await prepare(data_dir)
    listed, with_query, query_less, book, store, resident = [], [], [], [], [], []
    for _ in range(runs):  # alternate the kinds so machine noise hits them alike
        first_list, answer, memory = await once(data_dir, WITH_QUERY, settle=True)
        listed.append(first_list)
        with_query.append(answer)
        resident += [memory] if memory is not None else []
        second_list, answer, _ = await once(data_dir, QUERY_LESS)
        listed.append(second_list)
        query_less.append(answer)
        third_list, answer, _ = await once(data_dir, BOOK_QUESTION, tool="search_book")
        listed.append(third_list)
        book.append(answer)
        new_memory = {"content": f"Start-up run {len(store)}: {time.time()}", "tags": ["startup"]}
        fourth_list, answer, _ = await once(data_dir, new_memory, tool="store_memory")
        listed.append(fourth_list)
        store.append(answer)
    print(f"scoperag serve over stdio, all profiles, {runs} runs of each kind")
    print(_line("launch -> tools/list", listed))
    print(_line("launch -> first answer with a query (model)", with_query))
    print(_line("launch -> first query-less answer (no model)", query_less))
    print(_line("launch -> first book question (search_book)", book))
    print(_line("launch -> first write (store_memory)", store))
    if resident:
        label = "resident memory, warmed up (server + children)"
        print(
            f"{label:<48} median {statistics.median(resident):5.0f} MB "
            f"(min {min(resident):.0f}, max {max(resident):.0f})"
        )


if __name__ == "__main__":
    asyncio.run(main())
