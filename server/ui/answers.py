"""The UI's one error boundary and the headers on every answer.

Every refusal, wherever it arises (a tool's `ScoperagError`, a guard's 403, a missing page, a
query parameter of the wrong type), leaves the UI in one shape: `{"error": message}` for the
page's own scripts (they ask for JSON), the refusal page with the same message for a browser."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.routing import APIRoute

from scoperag.core.errors import ScoperagError

# Only the UI's own script and stylesheet run; nothing may frame a page (a click inside a
# frame of another site must not reach a form).
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def _message(exc: Exception) -> tuple[int, str]:
    if isinstance(exc, HTTPException):
        return exc.status_code, str(exc.detail)
    if isinstance(exc, RequestValidationError):
        problems = [
            f"'{'.'.join(map(str, e['loc'][1:]))}': {e['msg']} (given {e.get('input')!r})"
            for e in exc.errors()
        ]
        return 400, "Invalid value for " + "; ".join(problems) + "."
    return 400, str(exc)


def refusal(request: Request, exc: Exception, render: Callable[..., str]) -> Response:
    """`exc` answered in the UI's one shape: JSON to a script, the refusal page to a browser."""
    status, message = _message(exc)
    accept = request.headers.get("accept", "")
    if "application/json" in accept and "text/html" not in accept:
        return JSONResponse({"error": message}, status_code=status)
    return HTMLResponse(render("error.html", error=message), status_code=status)


def route_class(render: Callable[..., str]) -> type[APIRoute]:
    """A route class whose every handler answers refusals with `refusal` and carries the
    security headers."""

    class UiRoute(APIRoute):
        def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
            handler = super().get_route_handler()

            async def answer(request: Request) -> Response:
                try:
                    response = await handler(request)
                except (ScoperagError, HTTPException, RequestValidationError) as exc:
                    response = refusal(request, exc, render)
                response.headers.update(SECURITY_HEADERS)
                return response

            return answer

    return UiRoute
