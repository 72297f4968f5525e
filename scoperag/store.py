"""`Store`: the Python API over a data dir, one object per profile (`store.pdf`, `store.books`,
`store.memory`, `store.dnd`, `store.docs`) whose methods are the profile's MCP tools."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoperag.core.config.settings import PROFILES

if TYPE_CHECKING:
    from scoperag.core.config.settings import Settings
    from scoperag.core.embedding.embedders import Embedder
    from scoperag.evaluation import EvalReport
    from scoperag.profile_handle import Profile
    from scoperag.server.data_admin import DeleteReport, StoreListing


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
        from scoperag.tool_session import ToolSession

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
        self.runtime = Runtime(resolved, embedder)
        try:
            self._session = ToolSession(build_server(self.runtime), progress)
        except BaseException:
            self.runtime.close()
            raise
        self._profiles: dict[str, Profile] = {}

    def __getattr__(self, name: str) -> Profile:
        if name not in PROFILES:
            raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}")
        return self.profile(name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self.settings.profiles})

    def __repr__(self) -> str:
        profiles = ", ".join(self.settings.profiles)
        return f"<scoperag Store {self.settings.data_dir} ({profiles})>"

    def profile(self, name: str) -> Profile:
        """The object of profile `name` (also `store.<name>`); an error if it is not served."""
        from scoperag.core.errors import InvalidParameterError
        from scoperag.profile_handle import BookProfile, Profile

        if name not in self.settings.profiles:
            raise InvalidParameterError("profile", name, ", ".join(self.settings.profiles))
        if name not in self._profiles:
            kind = BookProfile if name == "books" else Profile
            self._profiles[name] = kind(self, name)
        return self._profiles[name]

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
        from scoperag.evaluation import evaluate

        return evaluate(self.call, Path(questions), k)

    def close(self) -> None:
        """End the tool session and release the engine (idempotent)."""
        self._session.close()
        self.runtime.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open(data_dir: str | os.PathLike[str] | None = None, **options: Any) -> Store:
    """`Store(data_dir, **options)`."""
    return Store(data_dir, **options)


def sample(profile: str) -> Path:
    """The bundled sample of a profile (for pdf: the folder of sample PDFs), to try it on."""
    from scoperag.core.errors import InvalidParameterError
    from scoperag.server.cli.demo import SAMPLES
    from scoperag.server.profiles import declaration

    if profile not in PROFILES:
        raise InvalidParameterError("profile", profile, ", ".join(PROFILES))
    return SAMPLES / declaration(profile).sample.path
