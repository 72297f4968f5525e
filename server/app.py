"""The main FastMCP server: one sub-server per enabled profile, mounted without a prefix."""

from __future__ import annotations

import importlib
import os

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")

from fastmcp import FastMCP  # noqa: E402

from scoperag.core.settings import Settings  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402
from scoperag.server.tooling import ScoperagErrorMiddleware  # noqa: E402

# profile -> module with `build(runtime) -> FastMCP` (imported only when the profile is on)
PROFILE_MODULES = {
    "pdf": "scoperag.server.pdf_tools",
    "books": "scoperag.server.books_tools",
    "memory": "scoperag.server.memory_tools",
    "dnd": "scoperag.server.dnd_tools",
    "docs": "scoperag.server.docs_tools",
}

INSTRUCTIONS = (
    "scoperag: retrieval scoped by metadata. Search PDF pages by document and page (qdrant-find), "
    "ask about a book without spoilers past the reader's position, search memories by tags, "
    "dates and type, look up D&D 5e content by source document, and search shared docs."
)


def build_server(runtime: Runtime | None = None) -> FastMCP:
    """The server for `runtime` (default: settings from the environment)."""
    runtime = runtime or Runtime(Settings())
    mcp = FastMCP("scoperag", instructions=INSTRUCTIONS, middleware=[ScoperagErrorMiddleware()])
    for profile in runtime.settings.profiles:
        module = importlib.import_module(PROFILE_MODULES[profile])
        mcp.mount(module.build(runtime))
    mcp.runtime = runtime  # type: ignore[attr-defined]
    return mcp
