"""The UI's pages that only read: overview, browse, search, a memory's edit form and
history, duplicates. A refusal is raised and answered by the UI's one error boundary
(`answers`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from scoperag.server.ui.context import UiContext


async def threaded(ctx: UiContext, template: str, build: Callable[[], dict[str, Any]]) -> Any:
    """`template` filled with what `build` gives, built in a worker thread (tool calls block
    until the tool answers)."""
    return await run_in_threadpool(lambda: HTMLResponse(ctx.render(template, **build())))


def read_routes(router: APIRouter, ctx: UiContext) -> None:
    """Add the pages that only read to `router`."""
    from scoperag.server.ui.browse import browse
    from scoperag.server.ui.overview import health, overview
    from scoperag.server.ui.search import search_page
    from scoperag.server.ui.upkeep import duplicates_page, edit_page, history_page

    @router.get("/", response_class=HTMLResponse)
    async def overview_page() -> Any:
        return await threaded(ctx, "overview.html", lambda: overview(ctx))

    @router.get("/health", response_class=HTMLResponse)
    async def health_part() -> Any:
        """The overview's check and disk sizes (the page asks for them once it is shown)."""
        return await threaded(ctx, "health.html", lambda: health(ctx))

    @router.get("/browse/{profile}", response_class=HTMLResponse)
    async def browse_page(profile: str, request: Request) -> Any:
        query = dict(request.query_params)

        def build() -> HTMLResponse:
            template, values = browse(ctx, ctx.profile(profile), query)
            return HTMLResponse(ctx.render(template, **values))

        return await run_in_threadpool(build)

    @router.get("/search/{profile}", response_class=HTMLResponse)
    async def search(profile: str, request: Request) -> Any:
        query = dict(request.query_params)
        return await threaded(
            ctx, "search.html", lambda: search_page(ctx, ctx.profile(profile), query)
        )

    @router.get("/memory/{profile}/edit/{content_hash}", response_class=HTMLResponse)
    async def edit(profile: str, content_hash: str) -> Any:
        return await threaded(ctx, "edit.html", partial(edit_page, ctx, profile, content_hash))

    @router.get("/memory/{profile}/history/{content_hash}", response_class=HTMLResponse)
    async def history(profile: str, content_hash: str) -> Any:
        build = partial(history_page, ctx, profile, content_hash)
        return await threaded(ctx, "history.html", build)

    @router.get("/memory/{profile}/duplicates", response_class=HTMLResponse)
    async def duplicates(profile: str, request: Request) -> Any:
        build = partial(duplicates_page, ctx, profile, dict(request.query_params))
        return await threaded(ctx, "duplicates.html", build)
