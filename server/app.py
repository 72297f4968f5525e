"""The main FastMCP server: the tools of each enabled profile, added as one provider each.

Providers rather than mounted sub-servers: a call to a mounted server runs a second middleware
chain and tool lookup, a millisecond per call.
"""

from __future__ import annotations

import importlib
import os

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
# FastMCP's session state (py-key-value) type-checks its own calls with beartype, which then
# instruments each of its modules as the first `tools/list` imports them: 0.2 s of that list.
# Its documented switch; a caller's own setting wins.
os.environ.setdefault("PY_KEY_VALUE_DISABLE_BEARTYPE", "true")

from fastmcp import FastMCP  # noqa: E402

from scoperag.core.settings import Settings  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402
from scoperag.server.tooling import (  # noqa: E402
    ScoperagErrorMiddleware,
    StrictArgumentsMiddleware,
)
from scoperag.server.warm_up import StartUpMiddleware  # noqa: E402

# profile -> module with `build(runtime) -> LocalProvider` (imported only when the profile is on)
PROFILE_MODULES = {
    "pdf": "scoperag.server.pdf_tools",
    "books": "scoperag.server.books_tools",
    "memory": "scoperag.server.memory_tools",
    "dnd": "scoperag.server.dnd_tools",
    "docs": "scoperag.server.docs_tools",
}

# profile -> its sentence in the server's instructions (only the enabled profiles are described)
PROFILE_INSTRUCTIONS = {
    "pdf": "Search PDF pages by document and page label or index (qdrant-find).",
    "books": "Ask about a book without spoilers past the reader's saved position.",
    "memory": "Store memories and search them by tags, dates and type.",
    "dnd": "Look up D&D 5e content (spells, monsters, items, rules) by source document.",
    "docs": "Search shared documents by scope, status, type, agent and update time.",
}


def instructions(profiles: list[str]) -> str:
    """The server's instructions: one sentence for each enabled profile."""
    sentences = " ".join(PROFILE_INSTRUCTIONS[profile] for profile in profiles)
    return f"scoperag: retrieval scoped by metadata. {sentences}".strip()


def build_server(runtime: Runtime | None = None) -> FastMCP:
    """The server for `runtime` (default: settings from the environment)."""
    runtime = runtime or Runtime(Settings())
    middleware = [
        StrictArgumentsMiddleware(),
        ScoperagErrorMiddleware(),
        StartUpMiddleware(runtime),
    ]
    mcp = FastMCP(
        "scoperag", instructions=instructions(runtime.settings.profiles), middleware=middleware
    )
    for profile in runtime.settings.profiles:
        module = importlib.import_module(PROFILE_MODULES[profile])
        mcp.add_provider(module.build(runtime))
    return mcp
