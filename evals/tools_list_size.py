"""What `tools/list` weighs: the whole answer for every profile, and per profile the part a
model reads (tool names, descriptions and input schemas) beside the output schemas.

The server is built on an empty store in a temporary folder (listing opens no engine), and
the list is asked through the in-process MCP client; sizes are of the JSON as it is sent.

    python evals/tools_list_size.py
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import Client  # noqa: E402

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.server.mcp.app import build_server  # noqa: E402
from scoperag.server.profiles import declarations  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402


def _size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


async def _listed(profiles: list[str], data_dir: Path) -> list[dict]:
    runtime = Runtime(Settings(data_dir=data_dir, profiles=profiles))
    async with Client(build_server(runtime)) as client:
        answer = await client.session.list_tools()
    return answer.model_dump(mode="json", by_alias=True, exclude_none=True)["tools"]


async def main() -> None:
    names = [profile.name for profile in declarations()]
    with tempfile.TemporaryDirectory() as tmp:
        every = await _listed(names, Path(tmp) / "all")
        print(f"tools/list, every profile: {len(every)} tools, {_size({'tools': every}):,} bytes")
        print(f"{'profile':<8} {'tools':>5} {'read by a model':>16} {'output schemas':>15}")
        for name in names:
            tools = await _listed([name], Path(tmp) / name)
            read = sum(
                _size(t["name"]) + _size(t.get("description", "")) + _size(t["inputSchema"])
                for t in tools
            )
            outputs = sum(_size(t.get("outputSchema", {})) for t in tools)
            print(f"{name:<8} {len(tools):>5} {read:>16,} {outputs:>15,}")


if __name__ == "__main__":
    asyncio.run(main())
