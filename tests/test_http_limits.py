"""The HTTP server's connection limits over real sockets (uvicorn with `DeadlineProtocol`):
slow requests are cut off, connections past the cap are refused, a flood of one error is logged
once a second."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from scoperag.server.http.limits import HttpLimits, OncePerSecond, http_server

SLOW = HttpLimits(header_seconds=0.5, body_seconds=0.5)
FEW = HttpLimits(max_connections=3)


async def echo(request: Request) -> PlainTextResponse:
    return PlainTextResponse(f"got {len(await request.body())} bytes")


@contextlib.contextmanager
def serving(limits: HttpLimits) -> Iterator[int]:
    """An app echoing body sizes, served with `limits`; yields its port."""
    app = Starlette(routes=[Route("/", echo, methods=["GET", "POST"])])
    server = http_server(app, "127.0.0.1", 0, limits)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    """Served with deadlines of half a second."""
    with serving(SLOW) as port:
        yield port


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(20)  # far past the deadlines: a connection held open fails the test
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    answer = b""
    while chunk := sock.recv(4096):
        answer += chunk
    return answer


def read_answer(sock: socket.socket) -> bytes:
    """One answer of `echo`, whose body ends in "bytes" (its headers and body may come apart)."""
    answer = b""
    while not answer.endswith(b"bytes") and (chunk := sock.recv(4096)):
        answer += chunk
    return answer


def test_a_request_whose_headers_drip_is_closed(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the blank line never comes
        assert read_all(sock) == b""


def test_a_request_whose_body_drips_is_closed(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n0123")
        assert b"got 100 bytes" not in read_all(sock)


def test_a_whole_request_is_answered_and_the_next_one_too(port: int) -> None:
    with connect(port) as sock:
        for _ in range(2):
            sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n\r\nabcd")
            assert read_answer(sock).endswith(b"got 4 bytes")


def test_connections_past_the_cap_are_refused_with_503() -> None:
    with serving(FEW) as port:
        refused_past_the_cap(port)


def refused_past_the_cap(port: int) -> None:
    held = [connect(port) for _ in range(FEW.max_connections)]
    try:
        for sock in held:  # each is accepted (and answered) before the next one connects
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert read_answer(sock).startswith(b"HTTP/1.1 200")
        with connect(port) as refused:
            answer = read_all(refused)
        assert answer.startswith(b"HTTP/1.1 503") and b"Too many open connections" in answer
    finally:
        for sock in held:
            sock.close()
    answers = []  # once the server has seen the closes, a connection is served again
    for _ in range(200):
        with connect(port) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answers.append(read_all(sock)[:12])
        if answers[-1] == b"HTTP/1.1 200":
            break
        time.sleep(0.05)
    assert answers[-1] == b"HTTP/1.1 200" and set(answers[:-1]) <= {b"HTTP/1.1 503"}, answers


def test_a_flood_of_one_error_is_logged_about_once_a_second() -> None:
    """Out of file descriptors, every failed accept logged a traceback: 237,531 in 15 s."""
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    handler.addFilter(OncePerSecond())
    logger = logging.getLogger("scoperag.test.flood")
    logger.addHandler(handler)
    logger.propagate = False
    started = time.monotonic()
    try:
        for attempt in range(5000):
            try:
                raise OSError(24, "Too many open files")
            except OSError:
                logger.exception("accept failed on fd %d", attempt)
        logger.warning("another message")
    finally:
        logger.removeHandler(handler)
    elapsed = time.monotonic() - started
    floods = [record for record in seen if record.msg.startswith("accept failed")]
    assert 1 <= len(floods) <= elapsed + 1
    assert seen[-1].getMessage() == "another message"


def test_the_uvicorn_internals_deadline_protocol_reads_are_there() -> None:
    """`DeadlineProtocol` subclasses uvicorn's private `H11Protocol` (docs/upstream.md): it is
    built as uvicorn's server builds a protocol, reads `conn`, `connections`, `loop` and
    `transport`, overrides the four methods below and relies on `on_response_complete` being
    what a request cycle calls when an answer is sent. This fails when any of that changes."""
    import asyncio
    import inspect

    import h11
    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle
    from uvicorn.server import ServerState

    from scoperag.server.http.limits import DeadlineProtocol

    server_source = inspect.getsource(uvicorn.Server)
    assert "config.http_protocol_class(" in server_source  # Config(http=) builds the protocol
    for keyword in ("config=config", "server_state=self.server_state", "_loop=_loop"):
        assert keyword in server_source, keyword
    assert "on_response=self.on_response_complete" in inspect.getsource(H11Protocol)
    assert "on_response" in inspect.signature(RequestResponseCycle).parameters
    for method in ("connection_made", "data_received", "on_response_complete", "connection_lost"):
        base, ours = getattr(H11Protocol, method), getattr(DeadlineProtocol, method)
        assert list(inspect.signature(base).parameters) == list(
            inspect.signature(ours).parameters
        ), method
    assert list(inspect.signature(uvicorn.Server.startup).parameters) == ["self", "sockets"]

    loop = asyncio.new_event_loop()
    try:
        app = Starlette(routes=[Route("/", echo)])
        config = uvicorn.Config(app, http=H11Protocol)
        config.load()
        state = ServerState()
        protocol = DeadlineProtocol(
            config=config, server_state=state, app_state={}, _loop=loop, limits=HttpLimits()
        )
        assert isinstance(protocol.conn, h11.Connection)
        assert protocol.connections is state.connections and protocol.loop is loop

        class Transport(asyncio.Transport):
            def get_extra_info(self, name: str, default: object = None) -> object:
                return ("127.0.0.1", 8000) if name in ("sockname", "peername") else default

            def is_closing(self) -> bool:
                return False

            def close(self) -> None:
                pass

        transport = Transport()
        protocol.connection_made(transport)
        assert protocol.transport is transport and protocol in state.connections
        assert protocol.read_deadline is not None  # armed for the headers
        protocol.connection_lost(None)
        assert protocol not in state.connections and protocol.read_deadline is None
    finally:
        loop.close()
