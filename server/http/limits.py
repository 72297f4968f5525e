"""Limits of `scoperag serve --transport http` on connections: read deadlines, an open-connection
cap, and logs that a flood of one error cannot fill.

uvicorn closes idle keep-alive connections (`timeout_keep_alive`) and answers 503 past
`limit_concurrency`, but a client that drips a request's headers or body a byte at a time holds
its connection (and a file descriptor) forever, and connections that never finish a request are
not counted. `DeadlineProtocol` (uvicorn's h11 protocol) closes a connection whose headers are
not all in within `header_seconds`, or whose body is not all in within `body_seconds` after
them, and refuses connections beyond `max_connections` with 503 at once (`HttpLimits`), a cap
kept under half the process's file descriptor limit so accepting never runs out of them.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol


@dataclass(frozen=True)
class HttpLimits:
    """How long a request may take to arrive, and how many connections may be open."""

    header_seconds: float = 10.0  # from the connection (or the previous answer) to the headers
    body_seconds: float = 30.0  # from the end of the headers to the end of the body
    keep_alive_seconds: int = 5  # an idle connection between requests
    max_connections: int = 256  # open at once (at most half the file descriptors); more: 503


_FULL_TEXT = b"Too many open connections; retry shortly."
_FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_FULL_TEXT), _FULL_TEXT)
)
_log = logging.getLogger("uvicorn.error")


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with request read deadlines and an open-connection cap."""

    def __init__(self, *args: Any, limits: HttpLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        self.read_deadline: asyncio.TimerHandle | None = None
        self.reading_body = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            _log.warning("Refused a connection: %d open (the cap).", self.limits.max_connections)
            transport.write(_FULL)
            transport.close()
            return
        self.arm(self.limits.header_seconds, body=False)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.SEND_BODY and not self.reading_body:
            self.arm(self.limits.body_seconds, body=True)
        elif state is not h11.IDLE and state is not h11.SEND_BODY:
            self.disarm()  # the request is all in (or the connection is ending)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self.arm(self.limits.header_seconds, body=False)  # the next request on this connection

    def connection_lost(self, exc: Exception | None) -> None:
        self.disarm()
        super().connection_lost(exc)

    def arm(self, seconds: float, body: bool) -> None:
        self.disarm()
        self.reading_body = body
        self.read_deadline = self.loop.call_later(seconds, self.read_too_slow)

    def disarm(self) -> None:
        if self.read_deadline is not None:
            self.read_deadline.cancel()
            self.read_deadline = None
        self.reading_body = False

    def read_too_slow(self) -> None:
        """Close the connection: its request did not arrive in time (the app, if it is reading
        the body, gets a disconnect)."""
        part = "body" if self.reading_body else "headers"
        _log.warning("Closed a connection whose request %s came too slowly.", part)
        self.read_deadline = None
        if not self.transport.is_closing():
            self.transport.close()


class OncePerSecond(logging.Filter):
    """Lets one record a second through per kind (logger, first line, exception type); the
    next one let through says how many were held."""

    def __init__(self) -> None:
        super().__init__()
        self.last: dict[tuple[str, str, str], float] = {}
        self.held: dict[tuple[str, str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        key = (record.name, str(record.msg).partition("\n")[0], error)
        now = time.monotonic()
        if now - self.last.get(key, -1.0) < 1.0:
            self.held[key] = self.held.get(key, 0) + 1
            return False
        self.last[key] = now
        held = self.held.pop(key, 0)
        if held:
            record.msg = f"{record.msg} ({held} more like it in the last second not logged)"
        return True


class AnnouncingServer(uvicorn.Server):
    """uvicorn's server, calling `on_ready` once its socket listens (not before: a client told
    the URL must be able to connect)."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None] | None) -> None:
        super().__init__(config)
        self.on_ready = on_ready

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self.on_ready is not None and not self.should_exit:
            self.on_ready()


def http_server(
    app: Any,
    host: str,
    port: int,
    limits: HttpLimits | None = None,
    on_ready: Callable[[], None] | None = None,
) -> uvicorn.Server:
    """uvicorn serving `app` with the read deadlines, the connection cap and rate-limited logs;
    `on_ready` runs once it listens."""
    limits = limits or HttpLimits()
    room = resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 2  # the rest: store, model, logs
    if room > 0:  # RLIM_INFINITY is -1
        limits = replace(limits, max_connections=min(limits.max_connections, room))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=partial(DeadlineProtocol, limits=limits),  # type: ignore[arg-type]
        timeout_keep_alive=limits.keep_alive_seconds,
        limit_concurrency=limits.max_connections + 1,  # uvicorn counts the request's own
    )
    server = AnnouncingServer(
        config, on_ready
    )  # its logging is configured now: filter every handler
    once = OncePerSecond()
    handlers = {logging.lastResort, *logging.getLogger().handlers}
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "asyncio"):
        handlers.update(logging.getLogger(name).handlers)
    for handler in handlers - {None}:
        handler.addFilter(once)
    return server
