"""The local model loaded in a child process for the calls that come before it is loaded here.

A server that has just started imports its handlers (LlamaIndex, qdrant-client) for seconds,
holding the interpreter lock, and the model needs seconds more (torch). When a call that embeds
arrives before the model is loaded, `serve` starts this child (`Embedder.start_bridge`): the model
loads on the other core while the handlers import, and the early calls embed through the child.
Once the server's own copy has loaded (the warm-up), the bridge is closed and the child exits; it
also exits when the server does, however that ends, as its end of the pipe closes. Messages are
`multiprocessing.connection` messages (pickled lists) over a socket pair.

    python -m scoperag.core.model_bridge FD FOLDER QUERY_THREADS BATCH_THREADS   (the child)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection, Pipe
from pathlib import Path

READY, FAILED = "ready", "failed"
_WAIT_STEP = 0.02  # seconds between looks at whether the caller still needs the child's model


class ModelBridge:
    """The server's end: `embed` sends texts to the child and returns its vectors, or None when
    the child cannot answer (its model failed to load, it is gone, or the caller gave up on it):
    the caller embeds in-process then."""

    def __init__(self, folder: Path, query_threads: int, batch_threads: int) -> None:
        mine, theirs = Pipe()
        command = [sys.executable, "-m", __name__, str(theirs.fileno()), str(folder)]
        command += [str(query_threads), str(batch_threads)]
        self._process = subprocess.Popen(
            command,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # a stdio server's stdout is the MCP channel
            env={**os.environ, "TOKENIZERS_PARALLELISM": "false"},
        )
        theirs.close()
        self._connection: Connection | None = mine
        self._ready = False
        self._lock = threading.Lock()

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def running(self) -> bool:
        """Whether the child process is still there."""
        return self._process.poll() is None

    def embed(self, texts: list[str], give_up: Callable[[], bool]) -> list[list[float]] | None:
        """The texts' vectors from the child, waiting for its model while `give_up()` is false
        (the model has loaded in-process meanwhile: no need to wait)."""
        with self._lock:
            connection = self._connection
            if connection is None:
                return None
            try:
                while not self._ready:
                    if connection.poll(_WAIT_STEP):
                        if connection.recv() != READY:  # the in-process load says why
                            break
                        self._ready = True
                    elif give_up():
                        return None
                if self._ready:
                    connection.send(texts)
                    return connection.recv()
            except (EOFError, OSError):
                pass  # the child is gone
            self._close_locked()
            return None

    def close(self) -> None:
        """Let the child go (it exits on the closed pipe) and reap it."""
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        try:
            self._process.wait(timeout=2)  # it exits on the closed pipe
        except subprocess.TimeoutExpired:  # still loading: nothing of it is needed
            self._process.kill()
            self._process.wait()


def _serve(connection: Connection, folder: Path, query_threads: int, batch_threads: int) -> None:
    """The child: load the model, say so, then answer texts with vectors until the pipe closes."""
    try:
        from scoperag.core.local_encoder import LocalEncoder

        encoder = LocalEncoder(folder, query_threads, batch_threads)
        encoder.embed(["warm-up"])  # first-call costs, before the first real query
    except Exception:  # the server loads it in-process too, and reports the error there
        connection.send(FAILED)
        return
    connection.send(READY)
    while True:
        try:
            texts = connection.recv()
        except EOFError:
            return
        connection.send(encoder.embed(texts))


if __name__ == "__main__":
    fd, folder, query_threads, batch_threads = sys.argv[1:]
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the server went away
        _serve(Connection(int(fd)), Path(folder), int(query_threads), int(batch_threads))
