"""The docs profile's HTTP routes: `POST /v2/docs/search/l0` and `GET /readyz`.

Imported only by `serve --transport http` (FastAPI stays out of a stdio server's start-up);
the search runs the same `DocsService.search` as the MCP tool `elf_docs_search_l0`.
"""

from __future__ import annotations

from typing import Any, Literal

import anyio
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError

from scoperag.core.engine.index_status import IndexesMissingError, IndexReport, index_report
from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.server.http.body import JSON_MEDIA_TYPE, UnsupportedMediaTypeError, json_object
from scoperag.server.http.errors import error_response
from scoperag.server.mcp.service_locator import deferred_service
from scoperag.server.mcp.tooling import (
    describe_validation_error,
    echo,
    parameter_name,
    unknown_argument,
)
from scoperag.server.profiles.docs.filters import FILTER_CONTRACT, DocsSearchRequest
from scoperag.server.profiles.docs.models import DocsSearchResult
from scoperag.server.profiles.docs.tools import SEARCH_PATH, SERVICE
from scoperag.server.runtime import Runtime


class InvalidRequestBody(BaseModel):
    """HTTP 400: which field was refused, the value given and the rule it breaks."""

    error: Literal["invalid_parameter", "unsupported_media_type"] = "invalid_parameter"
    contract: Literal["docs_search_filters/v1"] = FILTER_CONTRACT
    field: str
    value: Any
    rule: str
    message: str


class UnavailableBody(BaseModel):
    """HTTP 503: the store cannot serve filtered searches right now, and why."""

    error: Literal["indexes_missing", "store_unavailable"]
    message: str
    missing: list[str] = Field(default_factory=list)


def _refused(error: InvalidParameterError) -> JSONResponse:
    return error_response(error, contract=FILTER_CONTRACT, value=echo(error.value))


def _invalid(error: ValidationError) -> JSONResponse:
    first = error.errors()[0]
    declared = DocsSearchRequest.model_fields
    field = parameter_name(first["loc"])
    unknown = first["type"] == "extra_forbidden"
    body = InvalidRequestBody(
        field=field,
        value=None if first["type"] == "missing" else echo(first["input"]),
        rule=unknown_argument(field, declared) if unknown else first["msg"],
        message=describe_validation_error(error, declared),
    )
    return JSONResponse(body.model_dump(mode="json"), status_code=400)


def _unsupported(error: UnsupportedMediaTypeError) -> JSONResponse:
    body = InvalidRequestBody(
        error="unsupported_media_type",
        field="content-type",
        value=error.content_type,
        rule=JSON_MEDIA_TYPE,
        message=str(error),
    )
    return JSONResponse(body.model_dump(mode="json"), status_code=415)


def _unavailable(error: ScoperagError) -> JSONResponse:
    if isinstance(error, IndexesMissingError):
        return error_response(error, 503)
    return error_response(error, 503, error="store_unavailable", missing=[])


def http_router(runtime: Runtime) -> APIRouter:
    """`POST /v2/docs/search/l0` and the readiness endpoint `GET /readyz`."""
    service = deferred_service(SERVICE, runtime)
    router = APIRouter(tags=["docs"])
    request_schema = DocsSearchRequest.model_json_schema()

    @router.post(
        SEARCH_PATH,
        response_model=DocsSearchResult,
        responses={
            400: {"model": InvalidRequestBody},
            415: {"model": InvalidRequestBody},
            503: {"model": UnavailableBody},
        },
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": request_schema}},
            }
        },
    )
    async def search_l0(request: Request) -> Any:
        """Search the docs with the docs_search_filters/v1 contract (same as elf_docs_search_l0)."""
        try:
            body = json_object(await request.body(), request.headers.get("content-type"))
            search = DocsSearchRequest.model_validate(body)
            return await anyio.to_thread.run_sync(lambda: service().search(search))
        except UnsupportedMediaTypeError as exc:
            return _unsupported(exc)
        except ValidationError as exc:
            return _invalid(exc)
        except InvalidParameterError as exc:
            return _refused(exc)
        except ScoperagError as exc:
            return _unavailable(exc)

    @router.get("/readyz", response_model=IndexReport, responses={503: {"model": IndexReport}})
    async def readiness(response: Response) -> Any:
        """Ready when every enabled profile's collection has its required payload indexes."""
        try:
            report = await anyio.to_thread.run_sync(
                lambda: index_report(runtime.backend, runtime.settings)
            )
        except ScoperagError as exc:
            return _unavailable(exc)
        if not report.ready:
            response.status_code = 503
        return report

    return router
