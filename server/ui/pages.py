"""The UI's pages that only read: overview, browse, search, a memory's history, duplicates."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.concurrency import run_in_threadpool

from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.server.ui.context import UiContext


def page(ctx: UiContext, template: str, build: Callable[[], dict[str, Any]]) -> HTMLResponse:
    """`template` filled with what `build` gives; a refused request shows its error (400)."""
    try:
        values = build()
    except ScoperagError as exc:
        return HTMLResponse(ctx.render("error.html", error=str(exc)), status_code=400)
    return HTMLResponse(ctx.render(template, **values))


async def threaded(ctx: UiContext, template: str, build: Callable[[], dict[str, Any]]) -> Any:
    """`page` in a worker thread: tool calls block until the tool answers."""
    return await run_in_threadpool(page, ctx, template, build)


def read_routes(router: APIRouter, ctx: UiContext) -> None:
    """Add the pages that only read to `router`."""
    from scoperag.server.ui.browse import browse, listing_tools
    from scoperag.server.ui.overview import health, overview
    from scoperag.server.ui.search import search_page
    from scoperag.server.ui.upkeep import (
        duplicates_page,
        edit_fields,
        history_page,
        upkeep_tools,
    )

    @router.get("/", response_class=HTMLResponse)
    async def overview_page() -> Any:
        return await threaded(ctx, "overview.html", lambda: overview(ctx))

    @router.get("/health", response_class=HTMLResponse)
    async def health_part() -> Any:
        """The overview's check and disk sizes (the page asks for them once it is shown)."""
        return await threaded(ctx, "health.html", lambda: health(ctx))

    @router.get("/listing/{profile}/{tool}")
    async def listing(profile: str, tool: str) -> Any:
        """A listing tool's answer as JSON (a browse page asks when it is opened)."""

        def answer() -> Any:
            try:
                if tool not in listing_tools(ctx, ctx.profile(profile)):
                    raise InvalidParameterError("tool", tool, "a listing tool of the profile")
                return ctx.call(tool, {})
            except ScoperagError as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)

        return await run_in_threadpool(answer)

    @router.get("/browse/{profile}", response_class=HTMLResponse)
    async def browse_page(
        profile: str, group: str | None = None, value: str | None = None, page: int = 1
    ) -> Any:
        def build() -> dict[str, Any]:
            declared = ctx.profile(profile)
            found = browse(ctx, declared, group, value, page)
            upkeep = upkeep_tools(ctx, declared)
            edit = edit_fields(ctx, upkeep["update"]) if "update" in upkeep else []
            return {**found, "upkeep": upkeep, "edit_fields": edit}

        return await threaded(ctx, "browse.html", build)

    @router.get("/search/{profile}", response_class=HTMLResponse)
    async def search(profile: str, request: Request) -> Any:
        query = dict(request.query_params)
        return await threaded(
            ctx, "search.html", lambda: search_page(ctx, ctx.profile(profile), query)
        )

    @router.get("/memory/{profile}/history/{content_hash}", response_class=HTMLResponse)
    async def history(profile: str, content_hash: str) -> Any:
        build = partial(history_page, ctx, profile, content_hash)
        return await threaded(ctx, "history.html", build)

    @router.get("/memory/{profile}/duplicates", response_class=HTMLResponse)
    async def duplicates(profile: str, request: Request) -> Any:
        build = partial(duplicates_page, ctx, profile, dict(request.query_params))
        return await threaded(ctx, "duplicates.html", build)
