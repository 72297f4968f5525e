"""What the tools of one process share: settings, the engine and the embedder, opened lazily."""

from __future__ import annotations

import threading
from functools import cached_property
from typing import TYPE_CHECKING

from scoperag.core.config.settings import Settings

if TYPE_CHECKING:  # imported on first use, so `tools/list` answers without them
    from scoperag.core.embedding.embedders import Embedder
    from scoperag.core.engine.backend import VectorBackend


class Runtime:
    """Opens the engine and loads the model on first use, so start-up stays fast."""

    def __init__(self, settings: Settings | None = None, embedder: Embedder | None = None) -> None:
        self.settings = settings or Settings()
        self.tools_listed = threading.Event()  # a client has the tool list (warm-up's cue)
        self.calls_running = 0  # tool calls in progress: the warm-up gives way to them
        if embedder is not None:  # share one loaded model (tests, notebooks, benchmarks)
            self.__dict__["embedder"] = embedder

    @cached_property
    def backend(self) -> VectorBackend:
        """The engine: a Qdrant server by URL, else the data dir's embedded engine, shared.

        The embedded engine is opened here if no other process has it, else reached through
        the process that does (`SharedBackend`); either way every operation behaves the same.
        """
        if self.settings.effective_backend == "server":
            from scoperag.core.engine.collections import open_backend

            return open_backend(self.settings)
        from scoperag.core.engine.sharing.shared_backend import SharedBackend

        return SharedBackend(self.settings)

    @cached_property
    def embedder(self) -> Embedder:
        from scoperag.core.embedding.embedders import Embedder

        return Embedder(self.settings)

    def close(self) -> None:
        """Release the engine (an owner hands the store on to the processes attached to it)."""
        backend = self.__dict__.pop("backend", None)
        if backend is not None:
            backend.close()
