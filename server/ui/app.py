"""The UI's routes under `/ui`: in `scoperag ui`'s own app, or beside MCP in
`scoperag serve --transport http`'s. Both apps are guarded the same way
(`scoperag.server.http.security`: Host/Origin, the bearer token when set, body size)."""

from __future__ import annotations

from importlib import resources
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from scoperag.server.http.security import TOKEN_COOKIE, TOKEN_QUERY
from scoperag.server.runtime import Runtime
from scoperag.server.ui.actions import write_routes
from scoperag.server.ui.answers import route_class
from scoperag.server.ui.context import UiContext
from scoperag.server.ui.jobs import Jobs
from scoperag.server.ui.pages import read_routes

PREFIX = "/ui"
STATIC = {"ui.js": "text/javascript", "ui.css": "text/css"}


def ui_router(ctx: UiContext) -> APIRouter:
    """Every page and request of the UI, under /ui."""
    router = APIRouter(prefix=PREFIX, include_in_schema=False, route_class=route_class(ctx.render))

    @router.get("/static/{name}")
    async def static(name: str) -> Response:
        if name not in STATIC:
            raise HTTPException(404, f"No static file {name!r}.")
        body = resources.files("scoperag.server.ui").joinpath("static", name).read_bytes()
        return Response(body, media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    @router.get("/login")
    async def login(request: Request) -> Any:
        """A link carrying the token (`?token=`): the token becomes a same-site cookie."""
        token = request.query_params.get(TOKEN_QUERY, "")
        response = RedirectResponse(f"{PREFIX}/", status_code=303)
        response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict", path=PREFIX)
        return response

    read_routes(router, ctx)
    write_routes(router, ctx, Jobs())

    @router.api_route("/{path:path}", methods=["GET", "POST"])
    async def unknown(path: str) -> Response:
        """Any other path under /ui: refused in the UI's one shape."""
        raise HTTPException(404, f"The UI has no page /ui/{path}.")

    return router


def add_ui(app: FastAPI, runtime: Runtime) -> UiContext:
    """Serve the UI at /ui of `app`; close the returned context when the app stops."""
    ctx = UiContext(runtime)
    app.include_router(ui_router(ctx))

    @app.get(PREFIX, include_in_schema=False)
    async def ui_root() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=307)

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        """None (a browser asks on pages that name no icon, e.g. a refusal)."""
        return Response(status_code=204)

    return ctx


def ui_app(runtime: Runtime, host: str) -> tuple[FastAPI, UiContext]:
    """`scoperag ui`'s app: the UI alone (and `/` leading to it), guarded as HTTP serving is."""
    from scoperag.server.http.security import secure

    app = FastAPI(title="scoperag ui", docs_url=None, redoc_url=None, openapi_url=None)
    ctx = add_ui(app, runtime)

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=307)

    token = runtime.settings.http_token
    secure(app, host, token.get_secret_value() if token else None)
    return app, ctx
