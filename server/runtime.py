"""What the tools of one process share: settings, the engine and the embedder, opened lazily."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator
from functools import cached_property
from typing import TYPE_CHECKING

from scoperag.core.settings import Settings

if TYPE_CHECKING:  # imported on first use, so `tools/list` answers without them
    from scoperag.core.backend import VectorBackend
    from scoperag.core.embeddings import Embedder


class Runtime:
    """Opens the engine and loads the model on first use, so start-up stays fast."""

    def __init__(self, settings: Settings | None = None, embedder: Embedder | None = None) -> None:
        self.settings = settings or Settings()
        self._lock = threading.Lock()
        if embedder is not None:  # share one loaded model (tests, notebooks, benchmarks)
            self.__dict__["embedder"] = embedder

    @cached_property
    def backend(self) -> VectorBackend:
        from scoperag.core.collections import open_backend

        with self._lock:
            return open_backend(self.settings)

    @cached_property
    def embedder(self) -> Embedder:
        from scoperag.core.embeddings import Embedder

        return Embedder(self.settings)

    @contextlib.asynccontextmanager
    async def serialised(self) -> AsyncIterator[None]:
        """One call at a time on an embedded engine (MCP and HTTP alike); a server needs none."""
        if self.settings.effective_backend == "server":
            yield
            return
        if "_call_lock" not in self.__dict__:
            import anyio

            self._call_lock = anyio.Lock()
        async with self._call_lock:
            yield

    def close(self) -> None:
        """Release the engine (the embedded store can then be opened by another process)."""
        backend = self.__dict__.pop("backend", None)
        if backend is not None:
            backend.close()
