"""The checks every state-changing request of the UI passes: sent from the UI's own origin, and
carrying the page's CSRF token (the bearer token, when one is set, is checked before:
`scoperag.server.http.security`)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any

from fastapi import HTTPException, Request

CSRF_FIELD = "csrf"  # the form field holding the token
CSRF_HEADER = "x-csrf-token"  # the header holding it, for requests sent by the page's script


def own_origin(request: Request) -> str:
    """The origin the request was sent to: scheme://host[:port]."""
    return f"{request.url.scheme}://{request.headers.get('host', '')}"


def check_write(request: Request, secret: str, form: Mapping[str, Any] | None = None) -> None:
    """403 unless the request comes from the UI's own origin and carries its CSRF token."""
    origin = request.headers.get("origin")
    if origin != own_origin(request):
        raise HTTPException(
            403,
            f"Origin {origin!r} may not change this store: only pages of "
            f"{own_origin(request)} may (cross-site request refused).",
        )
    given = request.headers.get(CSRF_HEADER) or (form or {}).get(CSRF_FIELD) or ""
    if not isinstance(given, str) or not hmac.compare_digest(given.encode(), secret.encode()):
        raise HTTPException(403, "Missing or wrong CSRF token: reload the page and try again.")
