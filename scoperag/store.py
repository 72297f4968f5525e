"""`Store`: the Python API over a data dir, one object per profile (`store.pdf`, `store.books`,
`store.memory`, `store.dnd`, `store.docs`) whose methods are the profile's MCP tools."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoperag.core.progress import as_progress

# a profile's object in the Python API, unless its declaration names its own class
GENERIC_HANDLE = "scoperag.server.python_api.handle:Profile"

if TYPE_CHECKING:
    from scoperag.core.config.settings import Settings
    from scoperag.core.embedding.embedders import Embedder
    from scoperag.server.data_admin import DeleteReport, StoreListing
    from scoperag.server.eval_output import Comparison
    from scoperag.server.evaluation import EvalReport
    from scoperag.server.python_api.handle import Profile
    from scoperag.server.transfer.reports import ExportReport, ImportReport

# settings whose value given here is not the resident engine's: such a Store runs on its own
OWN_ENGINE_OR_MODEL = {
    "backend",
    "qdrant_url",
    "cache_dir",
    "embed_provider",
    "embed_model",
    "embed_precision",
}
# a transfer's progress: (points done, points in all[, note]); `(done, total)` alone works too
TransferProgress = Callable[..., None]


class Store:
    """The store under `data_dir` (default: SCOPERAG_DATA_DIR, else the user data dir).

    It works beside servers on the same data dir (processes share the embedded store).
    `allowed_dirs` bounds what ingestion may read; default SCOPERAG_ALLOWED_DIRS, else any file
    this process can read. Other keyword arguments are settings (e.g. `profiles=["pdf"]`), or
    pass `settings`. `progress=False` hides the ingestion progress bars; `embedder` shares a
    loaded model. Close it (or use `with`) when done.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        allowed_dirs: list[str | os.PathLike[str]] | None = None,
        progress: bool = True,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        **options: Any,
    ) -> None:
        from scoperag.core.config.settings import Settings
        from scoperag.server.mcp.app import build_server
        from scoperag.server.runtime import Runtime
        from scoperag.server.tool_session import ToolSession

        if settings is not None and options:
            raise TypeError(f"Store takes settings or settings options, not both: {options}")
        if data_dir is not None:
            options["data_dir"] = Path(data_dir)
        if allowed_dirs is not None:
            options["allowed_dirs"] = [Path(d) for d in allowed_dirs]
        resolved = settings.model_copy(update=options) if settings else Settings(**options)
        if not resolved.allowed_dirs:  # a Python caller reads what its own process can read
            resolved = resolved.model_copy(update={"allowed_dirs": [Path(Path.cwd().anchor)]})
        self.settings = resolved
        self._model = None
        if embedder is None and settings is None and not options.keys() & OWN_ENGINE_OR_MODEL:
            embedder = self._resident_embedder()
        self.runtime = Runtime(resolved, embedder)
        try:
            self._session = ToolSession(build_server(self.runtime), progress)
        except BaseException:
            self.runtime.close()
            raise
        self._profiles: dict[str, Profile] = {}

    def _resident_embedder(self) -> Embedder | None:
        """The data dir's resident engine's model (one is started if none runs), unless asked
        not to (SCOPERAG_IN_PROCESS=1) or none can serve (a read-only data dir); the engine
        is then reached through it too (it owns the store)."""
        from scoperag.core.embedding.embedders import Embedder
        from scoperag.server.daemon.embedding import resident_model

        if self.settings.embed_provider != "local" or self.settings.embed_model:
            return None
        folder = self.settings.data_dir.absolute()
        self._model = resident_model(folder, self.settings.effective_embed_model)
        return None if self._model is None else Embedder(self.settings, model=self._model)

    def __getattr__(self, name: str) -> Profile:
        from scoperag.server.profiles import names

        if name.startswith("_") or name not in names():
            raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}")
        return self.profile(name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self.settings.profiles})

    def __repr__(self) -> str:
        profiles = ", ".join(self._served())
        return f"<scoperag Store {self.settings.data_dir} ({profiles})>"

    def profile(self, name: str) -> Profile:
        """The object of profile `name` (also `store.<name>`); an error if it is not served."""
        import importlib

        from scoperag.core.errors import InvalidParameterError
        from scoperag.server.profiles import declaration

        if name not in self.settings.profiles:
            raise InvalidParameterError("profile", name, ", ".join(self._served()))
        if name not in self._profiles:
            declared = declaration(name)
            module, _, kind = (declared.python_api or GENERIC_HANDLE).partition(":")
            handle = getattr(importlib.import_module(module), kind)
            self._profiles[name] = handle(self._session, self.runtime, declared)
        return self._profiles[name]

    def _served(self) -> list[str]:
        """The profiles served, in their declared order."""
        from scoperag.server.profiles import declarations

        return [profile.name for profile in declarations(self.settings.profiles)]

    def call(self, tool: str, **arguments: Any) -> Any:
        """Call any tool by its MCP name: its result model, or `ToolCallError`."""
        return self._session.call(tool, arguments)

    def list(self) -> StoreListing:
        """What the store holds per profile (as `scoperag list`)."""
        from scoperag.server.data_admin import list_store

        return list_store(self.runtime.backend, self.settings)

    def delete(self, kind: str, name: str) -> DeleteReport:
        """Delete one thing (as `scoperag delete KIND NAME`): kind is pdf, book, memory, tag,
        docs, dnd, or collection (with a profile name)."""
        from scoperag.server.data_admin import delete

        return delete(self.runtime.backend, self.settings, kind, name)

    def evaluate(self, questions: str | os.PathLike[str], k: int = 5) -> EvalReport:
        """Score the questions of a JSONL file (as `scoperag eval`): hit@k, recall@k, MRR."""
        from scoperag.server.eval_output import StoreContents
        from scoperag.server.evaluation import evaluate

        return evaluate(self._session.call, Path(questions), k, StoreContents(self.runtime))

    def compare(self, questions: str | os.PathLike[str], against: Store, k: int = 5) -> Comparison:
        """Score the questions of a JSONL file on this store and on `against` (e.g. one built
        with another chunking), side by side (as `scoperag eval --against`): both reports,
        the questions that changed and a paired permutation test of each metric."""
        from scoperag.server.eval_output import compare

        return compare(self.evaluate(questions, k), against.evaluate(questions, k))

    def export(
        self,
        profile: str,
        path: str | os.PathLike[str],
        format: str | None = None,
        progress: TransferProgress | None = None,
    ) -> ExportReport:
        """Write a profile's collection to a JSON Lines file, gzip if it ends in `.gz` (as
        `scoperag export`); `format="mcp-memory-service"` writes that server's format."""
        from scoperag.server.transfer.exporting import export_profile

        return export_profile(self.runtime, profile, Path(path), format, as_progress(progress))

    def import_file(
        self,
        path: str | os.PathLike[str],
        into: str | None = None,
        reembed: bool = False,
        progress: TransferProgress | None = None,
    ) -> ImportReport:
        """Import an export file, or another memory server's export (as `scoperag import`)."""
        from scoperag.server.transfer.importing import import_file

        return import_file(self.runtime, Path(path), into, reembed, as_progress(progress))

    def close(self) -> None:
        """End the tool session and release the engine (idempotent)."""
        self._session.close()
        self.runtime.close()
        if self._model is not None:
            self._model.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open(data_dir: str | os.PathLike[str] | None = None, **options: Any) -> Store:
    """`Store(data_dir, **options)`."""
    return Store(data_dir, **options)


def sample(profile: str) -> Path:
    """The bundled sample of a profile (for pdf: the folder of sample PDFs), to try it on."""
    from scoperag.server.profiles import declaration
    from scoperag.server.samples import SAMPLES

    return SAMPLES / declaration(profile).sample.path
