"""The main FastMCP server: the tools of each enabled profile (as its declaration in
`server.profiles` names them), added as one provider each.

Providers rather than mounted sub-servers: a call to a mounted server runs a second middleware
chain and tool lookup, a millisecond per call.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import version

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
# FastMCP's session state (py-key-value) type-checks its own calls with beartype, which then
# instruments each of its modules as the first `tools/list` imports them: 0.2 s of that list.
# Its documented switch; a caller's own setting wins.
os.environ.setdefault("PY_KEY_VALUE_DISABLE_BEARTYPE", "true")

from fastmcp import FastMCP  # noqa: E402

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.server.mcp.tooling import (  # noqa: E402
    ScoperagErrorMiddleware,
    StrictArgumentsMiddleware,
)
from scoperag.server.mcp.warm_up import StartUpMiddleware  # noqa: E402
from scoperag.server.profiles import declarations  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402


def instructions(profiles: list[str]) -> str:
    """The server's instructions: one sentence for each enabled profile."""
    sentences = " ".join(profile.instructions for profile in declarations(profiles))
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
        "scoperag",
        version=version("scoperag"),
        instructions=instructions(runtime.settings.profiles),
        middleware=middleware,
        dereference_schemas=False,  # the output schemas' `$ref`s are sent as they are
    )
    for profile in declarations(runtime.settings.profiles):
        mcp.add_provider(importlib.import_module(profile.tools).build(runtime))
    return mcp
