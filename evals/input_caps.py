"""Every search, lookup and store tool with one argument at its cap: what such a call costs.

    python evals/input_caps.py [--calls 3]

Ingests the bundled samples (`scoperag samples`) into a throw-away store through the server's
own ingest tools, then, through FastMCP's in-memory client, calls each tool once per argument
with that argument at the cap its input schema declares (a string at `maxLength`, a list at
`maxItems` distinct values, a number at `maximum`, an enum at its first value) and the others
at plain values. Prints the p50 of `--calls` calls beside the tool's plain call, and the error
when the call is refused. Every string starts with the tool and the call's number, so no query
embedding is reused.
A 2,000-character query costs its embedding (90-110 ms here); anything far
above that is what this is for: ranking the D&D names once took 1.95 s for 1,000 one-letter
words.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.server.profiles import declaration  # noqa: E402
from scoperag.server.samples import SAMPLES  # noqa: E402

PROFILES = ["pdf", "books", "memory", "dnd", "docs"]
BOOK = "pride"


def _sample(profile: str) -> str:
    """The path of a profile's bundled sample (what `scoperag samples PROFILE` prints)."""
    return str(SAMPLES / declaration(profile).sample.path)


# Each profile's bundled sample, ingested by the server's own tool; a reader's position.
SETUP = [
    ("qdrant-ingest-pdf", {"paths": [_sample("pdf")]}),
    ("ingest_book", {"path": _sample("books"), "book_id": BOOK}),
    ("ingest_memories", {"path": _sample("memory")}),
    ("ingest_dnd", {"paths": [_sample("dnd")]}),
    ("ingest_docs", {"path": _sample("docs")}),
    ("set_reading_position", {"book_id": BOOK, "sentence": 100}),
]
# Arguments a plain call needs (the rest keep their defaults).
PLAIN = {
    "query": "fire",
    "information": "a note",
    "content": "a note",
    "book_id": BOOK,
}
SKIPPED = {name for name, _ in SETUP[:-1]} | {"qdrant-delete-document", "delete_memory"}


def _concrete(schema: dict[str, Any]) -> dict[str, Any]:
    """The first non-null alternative of an optional argument's schema."""
    for option in schema.get("anyOf", []):
        if option.get("type") != "null":
            return option
    return schema


def at_cap(name: str, schema: dict[str, Any], call: str) -> Any:
    """`name` at the largest value its schema accepts (None: no cap to test); strings and
    list items start with `call`."""
    schema = _concrete(schema)
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "array":
        item = _concrete(schema.get("items", {}))
        if "enum" in item:
            return list(item["enum"])
        return [f"{name}-{call}-{index}" for index in range(schema.get("maxItems", 1000))]
    if kind == "string" and "maxLength" in schema and schema.get("format") != "date":
        return (f"{call} " + "word " * schema["maxLength"])[: schema["maxLength"]]
    if kind in ("integer", "number") and "maximum" in schema:
        return schema["maximum"]
    return None


async def _timed(client: Any, tool: str, arguments: dict[str, Any]) -> tuple[float, str]:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments, raise_on_error=False)
    elapsed = time.perf_counter() - started
    error = " ".join(result.content[0].text.split())[:100] if result.is_error else ""
    return elapsed, error


async def sweep(settings: Settings, calls: int) -> None:
    from fastmcp import Client

    from scoperag.server.mcp.app import build_server
    from scoperag.server.runtime import Runtime

    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)  # refusals are printed below
    runtime = Runtime(settings)
    async with Client(build_server(runtime)) as client:
        for tool, arguments in SETUP:
            _, error = await _timed(client, tool, arguments)
            print(f"{tool}: {error or 'done'}")
        print(f"\n{'tool':<24} {'argument at its cap':<20} {'p50 ms':>8} {'plain ms':>9}  refused")
        for tool in await client.list_tools():
            if tool.name in SKIPPED:
                continue
            properties = tool.input_schema.get("properties", {})
            plain = {key: value for key, value in PLAIN.items() if key in properties}
            plain_times = [(await _timed(client, tool.name, plain))[0] for _ in range(calls)]
            for name, schema in properties.items():
                if at_cap(name, schema, "") is None:
                    continue
                times, error = [], ""
                for call in range(calls):
                    arguments = {**plain, name: at_cap(name, schema, f"{tool.name} {call}")}
                    elapsed, error = await _timed(client, tool.name, arguments)
                    times.append(elapsed)
                print(
                    f"{tool.name:<24} {name:<20} {statistics.median(times) * 1e3:8.1f} "
                    f"{statistics.median(plain_times) * 1e3:9.1f}  {error}"
                )
    runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3, help="Calls per argument (p50 of them).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scoperag-caps-") as scratch:
        settings = Settings(data_dir=Path(scratch), profiles=PROFILES, allowed_dirs=[SAMPLES])
        asyncio.run(sweep(settings, args.calls))


if __name__ == "__main__":
    main()
