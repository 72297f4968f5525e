"""The UI's requests that change the store (ingest, upload, edit, delete, merge) and the pages
that lead to them (ingest, eval). Every change is a tool call, after `guard.check_write`."""

from __future__ import annotations

import os
import re
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.server.samples import SAMPLES
from scoperag.server.ui.context import UiContext
from scoperag.server.ui.forms import form_arguments, form_fields, form_values
from scoperag.server.ui.guard import check_write
from scoperag.server.ui.jobs import Jobs
from scoperag.server.ui.pages import threaded
from scoperag.server.ui.upkeep import KEY, MERGE_AT_MOST, changes, edit_page, upkeep_tools
from scoperag.server.ui.words import link

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._ -]{0,200}")


def _ingest_tool(ctx: UiContext, profile: str) -> str:
    declared = ctx.profile(profile)
    tool = declared.methods.get("ingest")
    if tool is None or tool not in ctx.tools:
        raise InvalidParameterError("profile", profile, "a profile with an ingest tool")
    return tool


def confirmed(form: Any, what: str) -> None:
    """Refuse a change its page did not confirm (the confirming button sends `confirmed`)."""
    if form.get("confirmed") != "yes":
        raise ScoperagError(f"Not confirmed: {what} only after its confirmation in the page.")


def ingest_page(ctx: UiContext, profile: str | None, query: dict[str, Any]) -> dict[str, Any]:
    """The ingest form of `profile` (default: the first that ingests), the sample's path."""
    ingesting = [p for p in ctx.profiles() if p.methods.get("ingest") in ctx.tools]
    chosen = ctx.profile(profile) if profile else ingesting[0]
    schema = ctx.tools[_ingest_tool(ctx, chosen.name)].parameters
    sample = str(SAMPLES / chosen.sample.path)
    values = form_values(schema, query)
    if "sample" in query:  # the overview's link: the sample's path in the path input
        values |= {name: sample for name in ("path", "paths") if name in schema["properties"]}
    return {
        "chosen": chosen,
        "ingesting": ingesting,
        "fields": form_fields(schema),
        "values": values,
        "sample": sample,
        "allowed": [str(d) for d in ctx.allowed_dirs()],
    }


def write_routes(router: APIRouter, ctx: UiContext, jobs: Jobs) -> None:
    """Add the ingest, upload, upkeep and eval requests to `router`."""

    @router.get("/ingest", response_class=HTMLResponse)
    async def ingest_form(request: Request, profile: str | None = None) -> Any:
        query = dict(request.query_params)
        return await threaded(ctx, "ingest.html", lambda: ingest_page(ctx, profile, query))

    @router.post("/ingest/{profile}")
    async def ingest(profile: str, request: Request) -> Any:
        form = dict(await request.form())
        check_write(request, ctx.csrf, form)
        tool = _ingest_tool(ctx, profile)
        arguments = form_arguments(ctx.tools[tool].parameters, form)
        return {"job": jobs.start(ctx, tool, arguments).view()}

    @router.get("/jobs/{job_id}")
    async def job(job_id: int) -> Any:
        found = jobs.get(job_id)
        if found is None:
            raise HTTPException(404, f"No ingestion {job_id} is known to this UI.")
        return found.view()

    @router.post("/upload")
    async def upload(request: Request, name: str) -> Any:
        check_write(request, ctx.csrf)
        if not SAFE_NAME.fullmatch(name) or name != os.path.basename(name):
            raise InvalidParameterError("name", name, "a plain file name")
        body = await request.body()
        ctx.uploads.mkdir(parents=True, exist_ok=True)
        target = ctx.uploads / name
        partial = target.with_name(f".{name}.part")
        partial.write_bytes(body)
        partial.replace(target)
        return {"path": str(target), "bytes": len(body)}

    @router.post("/memory/{profile}/update")
    async def update(profile: str, request: Request) -> Response:
        form = dict(await request.form())
        check_write(request, ctx.csrf, form)
        confirmed(form, "a memory is saved")

        def save() -> Response:
            values = edit_page(ctx, profile, str(form.get(KEY, "")))
            tool = values["upkeep"]["update"]
            changed = changes(values["memory"], form)
            if not changed:
                notice = "Nothing changed: the memory is kept as it is (no new version)."
                page = ctx.render("edit.html", **values | {"notice": notice})
                return HTMLResponse(page)
            arguments = form_arguments(ctx.tools[tool].parameters, changed)
            result = ctx.call(tool, {KEY: values["memory"][KEY], **arguments})
            return RedirectResponse(f"history/{result[KEY]}", status_code=303)

        return await run_in_threadpool(save)

    @router.post("/memory/{profile}/delete")
    async def delete(profile: str, request: Request) -> Response:
        form = dict(await request.form())
        check_write(request, ctx.csrf, form)
        confirmed(form, "a memory is deleted")
        tool = upkeep_tools(ctx, ctx.profile(profile)).get("delete")
        if tool is None:
            raise ScoperagError("This store serves no delete_memory tool.")
        await run_in_threadpool(ctx.call, tool, {KEY: form.get(KEY, "")})
        return RedirectResponse(f"../../browse/{profile}", status_code=303)

    @router.post("/memory/{profile}/merge")
    async def merge(profile: str, request: Request) -> Response:
        form = await request.form()
        check_write(request, ctx.csrf, dict(form))
        confirmed(form, "memories are merged")
        tool = upkeep_tools(ctx, ctx.profile(profile)).get("merge")
        if tool is None:
            raise ScoperagError("This store serves no merge_memories tool.")
        hashes = [str(h) for h in form.getlist("content_hashes")]
        if len(hashes) > MERGE_AT_MOST:
            raise InvalidParameterError(
                "content_hashes", f"{len(hashes)} memories", f"at most {MERGE_AT_MOST} at once"
            )
        arguments: dict[str, Any] = {"content_hashes": hashes}
        if form.get("content"):
            arguments["content"] = form["content"]
        await run_in_threadpool(ctx.call, tool, arguments)
        kept = {name: form[name] for name in ("threshold", "limit", "tags") if form.get(name)}
        return RedirectResponse("duplicates" + link(kept), status_code=303)

    @router.get("/eval", response_class=HTMLResponse)
    async def eval_form() -> Any:
        return await threaded(ctx, "eval.html", lambda: {"report": None})

    @router.post("/eval", response_class=HTMLResponse)
    async def eval_run(request: Request) -> Any:
        form = dict(await request.form())
        check_write(request, ctx.csrf, form)  # it runs tools: same-origin only, as a change

        def build() -> dict[str, Any]:
            from scoperag.core.config.paths import regular_file
            from scoperag.server.eval_explain import explain_misses, render_misses
            from scoperag.server.eval_output import StoreContents
            from scoperag.server.evaluation import evaluate, read_questions
            from scoperag.server.ui.search import search_link

            path = regular_file(str(form.get("path", "")), ctx.allowed_dirs(), "path")
            k = form_arguments({"properties": {"k": {"type": "integer"}}}, form).get("k", 5)
            call, tools = ctx.session.call, ctx.session.tools
            report = evaluate(call, path, k, StoreContents(ctx.runtime))
            questions = dict(read_questions(path)[0])
            owners = {tool: p.name for p in ctx.profiles() for tool in p.methods.values()}
            links = {
                miss.line: search_link(owners[miss.tool], miss.tool, questions[miss.line].arguments)
                for miss in report.missed
                if miss.tool in owners
            }

            def properties(tool: str) -> dict[str, Any]:
                return tools[tool].parameters.get("properties", {})

            why = explain_misses(call, properties, ctx.runtime.backend, report, path)
            data = report.model_dump(mode="json")
            return {"report": data, "path": str(path), "links": links, "why": render_misses(why)}

        return await threaded(ctx, "eval.html", build)
