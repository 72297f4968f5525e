"""The app of `scoperag serve --transport http`: MCP at /mcp plus each profile's HTTP routes."""

from __future__ import annotations

import importlib

from fastapi import FastAPI
from fastmcp import FastMCP

from scoperag.server.http.errors import add_error_boundary
from scoperag.server.http.security import secure
from scoperag.server.profiles import declarations
from scoperag.server.runtime import Runtime
from scoperag.server.ui.app import add_ui


def build_http_app(runtime: Runtime, mcp: FastMCP, host: str = "127.0.0.1") -> FastAPI:
    """FastAPI app (OpenAPI at /openapi.json): `/mcp`, `/healthz`, profile routers and the web
    UI at `/ui`.

    An enabled profile that declares HTTP routes adds its module's `http_router(runtime)`.
    Every path but `/healthz` needs SCOPERAG_HTTP_TOKEN when it is set; Host/Origin and body
    size are checked on all of them (`server.http.security`); `host` is the address the server
    is bound to.
    """
    mcp_app = mcp.http_app(path="/mcp")
    app = FastAPI(title="scoperag", lifespan=mcp_app.lifespan)

    @app.get("/healthz")
    async def health() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    for profile in declarations(runtime.settings.profiles):
        if profile.http:
            app.include_router(importlib.import_module(profile.http).http_router(runtime))
    add_error_boundary(app)
    add_ui(app, runtime)
    app.mount("/", mcp_app)
    token = runtime.settings.http_token
    secure(app, host, token.get_secret_value() if token else None)
    return app
