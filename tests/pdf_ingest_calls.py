"""MCP calls the pdf ingestion tests share: the documents listed, and an ingest given up."""

from __future__ import annotations

from pathlib import Path

import anyio
from fastmcp import Client

from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime


async def documents(runtime: Runtime) -> list[str]:
    """The document ids `qdrant-list-documents` lists."""
    async with Client(build_server(runtime)) as client:
        listing = await client.call_tool("qdrant-list-documents", {})
    return [doc["document_id"] for doc in listing.structured_content["documents"]]


async def ingest_and_give_up(runtime: Runtime, path: Path) -> None:
    """Call `qdrant-ingest-pdf` on `path` and cancel it at its first progress notification,
    as a client that gives up does."""
    async with Client(build_server(runtime)) as client, anyio.create_task_group() as group:

        async def give_up(progress: float, total: float | None, message: str | None) -> None:
            group.cancel_scope.cancel()

        async def call() -> None:
            arguments = {"paths": [str(path)]}
            await client.call_tool("qdrant-ingest-pdf", arguments, progress_handler=give_up)

        group.start_soon(call)
