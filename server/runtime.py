"""What the tools of one process share: settings, the engine and the embedder, opened lazily."""

from __future__ import annotations

import threading
from functools import cached_property
from typing import TYPE_CHECKING

from scoperag.core.config.settings import Settings

if TYPE_CHECKING:  # imported on first use, so `tools/list` answers without them
    from scoperag.core.embedding.embedders import Embedder
    from scoperag.core.engine.backend import VectorBackend


# the resident engine's runtime (`server/daemon/`): every other Runtime of its process with the
# same store and embedder settings uses its engine and model instead of opening its own
_resident: Runtime | None = None
EMBEDDER_SETTINGS = (
    "embed_provider",
    "embed_model",
    "embed_precision",
    "ollama_base_url",
    "embed_dimensions",
)


def make_resident(runtime: Runtime) -> None:
    """Serve `runtime`'s engine and model to every Runtime of this process it can serve."""
    global _resident
    _resident = runtime


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
        resident = _resident
        if resident is not None and resident is not self and self._same(resident, "engine"):
            self._borrowed = True
            return resident.backend
        if self.settings.effective_backend == "server":
            from scoperag.core.engine.collections import open_backend

            return open_backend(self.settings)
        from scoperag.core.engine.sharing.shared_backend import SharedBackend

        return SharedBackend(self.settings)

    @cached_property
    def embedder(self) -> Embedder:
        resident = _resident
        if resident is not None and resident is not self and self._same(resident, "embedder"):
            return resident.embedder
        from scoperag.core.embedding.embedders import Embedder

        return Embedder(self.settings)

    def _same(self, other: Runtime, part: str) -> bool:
        """Whether `other`'s engine (`part="engine"`) or embedder serves these settings."""
        fields = ("data_dir", "qdrant_url", "backend") if part == "engine" else EMBEDDER_SETTINGS
        return all(getattr(self.settings, f) == getattr(other.settings, f) for f in fields)

    def close(self) -> None:
        """Release the engine (an owner hands the store on to the processes attached to it)."""
        backend = self.__dict__.pop("backend", None)
        if backend is not None and not self.__dict__.pop("_borrowed", False):
            backend.close()
