"""An ASGI app served by uvicorn on a free local port, in a thread of the test process."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import uvicorn
from starlette.types import ASGIApp


@contextlib.contextmanager
def serving(app: ASGIApp) -> Iterator[str]:
    """Yield the base URL (`http://127.0.0.1:<port>`) while uvicorn serves `app`."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
