"""The resident engine's model for a process that loads none of its own (`scoperag.Store()`):
texts are embedded there (`daemon.embed`) on one connection, kept open while the process uses
it (so the resident engine stays), and opened again, with a resident engine started, if it
went away."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoperag.server.daemon import locate

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from scoperag.core.embedding.embedders import Embedder


class ResidentModel:
    """An embedder's model (`core.embedding.embedders`) run by the resident engine of `folder`;
    raises `DaemonUnavailableError` at once if none can run."""

    normalises = True  # the resident engine runs the local model, whose graph ends in a norm

    def __init__(self, folder: Path, name: str) -> None:
        self.folder, self.name = folder, name
        self._lock = threading.Lock()
        self._line: locate.Line | None = None
        self._embed(["connect"], query=True)

    def _embed(self, texts: list[str], query: bool) -> list[list[float]]:
        params = {"texts": texts, "query": query}
        with self._lock:
            if self._line is not None:
                try:
                    return self._line.request("daemon.embed", params)
                except (OSError, ValueError):  # it went away: a new one below
                    self._line.close()
                    self._line = None
            self._line, vectors = locate.session("daemon.embed", params, self.folder)
            self._line.socket.settimeout(None)
            return vectors

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text], query=True)[0]

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts, query=False)

    def as_llama_index(self, checked: Embedder) -> BaseEmbedding:
        from scoperag.core.embedding.llama_embedding import LocalModelEmbedding

        return LocalModelEmbedding(checked, self.name)

    def close(self) -> None:
        with self._lock:
            if self._line is not None:
                self._line.close()
                self._line = None


def resident_model(folder: Path, name: str) -> Any:
    """`ResidentModel(folder, name)`, or None where no resident engine can serve."""
    if locate.in_process_asked():
        return None
    try:
        return ResidentModel(folder, name)
    except locate.DaemonUnavailableError:
        return None
