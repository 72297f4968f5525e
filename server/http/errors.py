"""The HTTP error boundary: every refusal is one JSON shape, `{"error", "message", ...}`
(`scoperag.core.errors.error_body`), with the status its kind calls for."""

from __future__ import annotations

from fastapi import FastAPI, Request
from starlette.responses import JSONResponse

from scoperag.core.errors import ConflictError, InvalidParameterError, ScoperagError, error_body

# error class -> HTTP status (the first match in this order; anything else is the server's: 500)
_STATUS: list[tuple[type[ScoperagError], int]] = [
    (InvalidParameterError, 400),
    (ConflictError, 409),
]


def error_response(
    error: ScoperagError, status: int | None = None, **extra: object
) -> JSONResponse:
    """`error` as its JSON body (plus `extra` fields) with `status`, or the one its kind has."""
    found = next((code for kind, code in _STATUS if isinstance(error, kind)), 500)
    return JSONResponse({**error_body(error), **extra}, status_code=status or found)


def refusal(
    code: str, message: str, status: int, headers: dict[str, str] | None = None
) -> JSONResponse:
    """A refusal that is no `ScoperagError` (a missing token, a foreign host), in the same shape."""
    return JSONResponse({"error": code, "message": message}, status_code=status, headers=headers)


def add_error_boundary(app: FastAPI) -> None:
    """Every route's uncaught `ScoperagError` answered by `error_response`."""

    async def handle(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, ScoperagError)  # registered for this class only
        return error_response(error)

    app.add_exception_handler(ScoperagError, handle)
