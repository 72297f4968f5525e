"""Access control of the HTTP app: bearer token, Host/Origin checks, request body limit.

The Host/Origin guard (DNS-rebinding protection) is FastMCP's own `HostOriginGuardMiddleware`
in strict mode and the body limit is the MCP SDK's `RequestBodyLimitMiddleware`, applied to the
whole app (MCP and the profiles' HTTP routes alike). Ours: the token check, and the answer to a
foreign Host, which is 403 naming the Host (the guard itself says 421 Misdirected Request).
"""

from __future__ import annotations

import hmac
import ipaddress

import fastmcp
from fastapi import FastAPI
from fastmcp.server.http import HostOriginGuardMiddleware
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from scoperag.server.http.errors import refusal

# Paths answered without a token: liveness only.
OPEN_PATHS = frozenset({"/healthz"})
# A browser sends no Authorization header: the web UI's pages take the token from a cookie,
# set by `/ui/login?token=...` from the token in the link the UI prints.
UI_PATHS = "/ui"
TOKEN_COOKIE = "scoperag_token"
TOKEN_QUERY = "token"
MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerTokenMiddleware:
    """401 unless `Authorization: Bearer <token>` carries the token (constant-time compare; the
    scheme is case-insensitive, RFC 9110 section 11.1)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        scheme, _, given = Headers(scope=scope).get("authorization", "").partition(" ")
        matches = hmac.compare_digest(given.strip(" ").encode("latin-1"), self.expected)
        if not ((matches and scheme.lower() == "bearer") or self._ui_token(scope)):
            response = refusal(
                "unauthorized",
                "Missing or wrong bearer token: send the header "
                "'Authorization: Bearer <SCOPERAG_HTTP_TOKEN>'.",
                401,
                {"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _ui_token(self, scope: Scope) -> bool:
        """A UI page's token: its cookie, or the login link's query parameter."""
        path = scope["path"]
        if path != UI_PATHS and not path.startswith(UI_PATHS + "/"):
            return False
        given = [Request(scope).cookies.get(TOKEN_COOKIE, "")]
        if path == f"{UI_PATHS}/login":
            given.append(Request(scope).query_params.get(TOKEN_QUERY, ""))
        return any(hmac.compare_digest(g.encode("utf-8"), self.expected) for g in given)


class ForeignHostForbidden:
    """A foreign Host is refused with 403 and a message naming it and how to allow it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = False

        async def relay(message: dict) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 421:
                refused = True
                host = Headers(scope=scope).get("host", "")
                response = refusal(
                    "forbidden_host",
                    f"Host {host!r} is not served here (DNS-rebinding protection). Use a "
                    "loopback name or the address the server is bound to, or allow it with "
                    "FASTMCP_HTTP_ALLOWED_HOSTS.",
                    403,
                )
                await response(scope, receive, send)
            elif not refused:  # the guard's own 421 body is replaced by the response above
                await send(message)

        await self.app(scope, receive, relay)


def secure(app: FastAPI, host: str, token: str | None) -> None:
    """Add the guards to `app`, outermost first: Host/Origin, token, body size.

    Allowed Host names: loopback names, the bound `host` and FASTMCP_HTTP_ALLOWED_HOSTS;
    allowed Origins: the request's own, loopback ones and FASTMCP_HTTP_ALLOWED_ORIGINS.
    """
    app.add_middleware(RequestBodyLimitMiddleware, max_body_size=MAX_BODY_BYTES)
    if token:
        app.add_middleware(BearerTokenMiddleware, token=token)
    app.add_middleware(
        HostOriginGuardMiddleware,
        allowed_hosts=[host, *(fastmcp.settings.http_allowed_hosts or [])],
        allowed_origins=fastmcp.settings.http_allowed_origins,
        mode="strict",
    )
    app.add_middleware(ForeignHostForbidden)
