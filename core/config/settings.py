"""Settings read from `SCOPERAG_*` environment variables, one model for the whole process."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_MODELS = {
    "local": "sentence-transformers/all-MiniLM-L6-v2",
    # BAAI/bge-base-en-v1.5 (768-d, the model the books specification names) as a GGUF build
    # Ollama pulls from the Hugging Face hub; `all-minilm` (all-MiniLM-L6-v2, 384-d) is the light
    # choice
    "ollama": "hf.co/CompendiumLabs/bge-base-en-v1.5-gguf:Q8_0",
}


def _split_list(value: object) -> object:
    """Accept `a,b` (or a JSON list) for list settings given as one env string."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return json.loads(text)
        return [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]
    return value


def _installed_profiles() -> list[str]:
    """Every profile installed: those whose contract is found (`scoperag.core.contracts`)."""
    from scoperag.core.contracts import profile_names

    return profile_names()


class Settings(BaseSettings):
    """Effective configuration; every field has a `SCOPERAG_<NAME>` environment variable."""

    model_config = SettingsConfigDict(env_prefix="SCOPERAG_", extra="ignore")

    data_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("scoperag")),
        description="Where the embedded store and reading state live.",
    )
    cache_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_cache_dir("scoperag")),
        description="What can be computed again: the packaged model's digest checks.",
    )
    backend: Literal["local", "edge", "server"] | None = Field(
        default=None,
        description="Vector engine: embedded `edge` (default) or `local`, or `server` (a URL).",
    )
    qdrant_url: str | None = Field(default=None, description="Qdrant server URL; implies server.")
    qdrant_api_key: SecretStr | None = Field(default=None, description="API key for the server.")
    embed_provider: Literal["local", "ollama"] = Field(
        default="local", description="`local` (packaged MiniLM) or `ollama` (HTTP /api/embed)."
    )
    embed_model: str | None = Field(default=None, description="Model name; provider default.")
    ollama_base_url: str = Field(default="http://localhost:11434", description="Ollama base URL.")
    embed_dimensions: int | None = Field(default=None, ge=1, description="Output dimensions.")
    embed_precision: Literal["fp32", "int8"] = Field(
        default="fp32",
        description="The local model's precision: fp32 (upstream's weights), or int8 (their "
        "dynamic per-channel quantization, made once in the cache dir; about twice as fast on "
        "CPU; a store built with one precision is searched with that one only).",
    )
    embed_threads: int = Field(
        default=1,
        ge=1,
        description="onnxruntime threads embedding one text (a query, one stored memory): 1 "
        "keeps a query's tail latency short when other work shares the cores.",
    )
    embed_batch_threads: int | None = Field(
        default=None,
        ge=1,
        description="onnxruntime threads embedding a batch of texts (ingestion); default: every "
        "core this process may use.",
    )
    profiles: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: _installed_profiles(),
        description="Profiles served, e.g. `pdf,books`.",
    )
    allowed_dirs: Annotated[list[Path], NoDecode] = Field(
        default_factory=list, description="Directories the MCP ingest tools may read from."
    )
    ingest_max_files: int = Field(
        default=1000, ge=1, description="Files one MCP ingest call may read (after a folder scan)."
    )
    ingest_deadline_seconds: float = Field(
        default=1800, gt=0, description="An MCP ingest call stops after this many seconds."
    )
    max_source_mb: float = Field(
        default=256,
        gt=0,
        description="Largest file an ingestion reads, in MiB: a bigger one is refused by its "
        "size, before it is parsed.",
    )
    max_pdf_pages: int = Field(
        default=5000,
        ge=1,
        description="Most pages a PDF may have: one with more is refused before its text is read.",
    )
    max_items: int = Field(
        default=100_000,
        ge=1,
        description="Most items one file may hold (memories in a memories file, lines of a docs "
        "JSONL file, records of an Open5e JSON file): a file with more is refused before any "
        "is embedded.",
    )
    max_sentence_chars: int = Field(
        default=100_000,
        ge=1,
        description="Longest run of text without a sentence end a book or text source may hold: "
        "one longer is refused (it is not prose), before it is split or embedded.",
    )
    max_import_mb: float = Field(
        default=4096,
        gt=0,
        description="Most MiB an import file may hold once decompressed (read as a stream; "
        "another server's export, read whole, is capped by max_source_mb).",
    )
    max_import_line_mb: float = Field(
        default=64,
        gt=0,
        description="Longest line of an import file, in MiB: a longer one is refused by its "
        "number without being held in memory.",
    )
    pdf_collection: str = Field(default="pdf_pages", description="Collection of the pdf profile.")
    http_token: SecretStr | None = Field(
        default=None,
        description="Bearer token every HTTP request must carry (all paths but /healthz); "
        "required to serve HTTP on an address other than loopback.",
    )
    daemon_idle_seconds: float = Field(
        default=600.0,
        ge=0,
        description="How long the data dir's resident engine stays after its last client has "
        "gone (`scoperag daemon`); 0: it exits as soon as none is connected.",
    )
    filterable_fields: str | None = Field(
        default=None, description="JSON list of extra filter fields for `qdrant-find`."
    )
    fields_file: Path | None = Field(
        default=None, description="TOML file with [[fields]] tables for `qdrant-find`."
    )
    dnd_document_priority: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["wotc-srd"],
        description="D&D documents whose copy of a name comes first, in order (e.g. "
        "`wotc-srd,tob`); other documents follow alphabetically.",
    )

    @field_validator("profiles", "allowed_dirs", "dnd_document_priority", mode="before")
    @classmethod
    def _parse_lists(cls, value: object) -> object:
        return _split_list(value)

    @field_validator("profiles")
    @classmethod
    def _known_profiles(cls, value: list[str]) -> list[str]:
        installed = _installed_profiles()
        unknown = [name for name in value if name not in installed]
        if unknown:
            raise ValueError(
                f"unknown profile(s) {', '.join(unknown)}; accepted: {', '.join(installed)} "
                "(comma-separated)"
            )
        return value

    @model_validator(mode="after")
    def _backend_matches_url(self) -> Settings:
        if self.backend == "server" and not self.qdrant_url:
            raise ValueError("SCOPERAG_BACKEND=server needs SCOPERAG_QDRANT_URL to be set.")
        if self.qdrant_url and self.backend in ("local", "edge"):
            raise ValueError(
                f"SCOPERAG_QDRANT_URL is set but SCOPERAG_BACKEND={self.backend}: "
                "unset one of them (a URL means the server backend)."
            )
        return self

    @property
    def effective_backend(self) -> str:
        """The engine in use: a URL means the server; otherwise the embedded default, `edge`.

        A data dir that holds only a local-mode store (from before edge was the default) keeps
        using it, so existing data keeps working until `scoperag migrate --from local --to edge`.
        """
        if self.qdrant_url:
            return "server"
        if self.backend:
            return self.backend
        if (self.data_dir / "qdrant").is_dir() and not (self.data_dir / "edge").is_dir():
            return "local"
        return "edge"

    @property
    def effective_embed_model(self) -> str:
        """The model's name, as collections record it: the local model in int8 is a model of
        its own (`+int8`)."""
        name = self.embed_model or DEFAULT_MODELS[self.embed_provider]
        local_int8 = self.embed_provider == "local" and self.embed_precision == "int8"
        return f"{name}+int8" if local_int8 else name

    @property
    def effective_embed_batch_threads(self) -> int:
        """SCOPERAG_EMBED_BATCH_THREADS, else the cores this process may run on."""
        if self.embed_batch_threads:
            return self.embed_batch_threads
        if hasattr(os, "sched_getaffinity"):
            return len(os.sched_getaffinity(0))
        return os.cpu_count() or 1

    @property
    def state_path(self) -> Path:
        return self.data_dir / "state.sqlite"

    def public_view(self) -> dict[str, object]:
        """Settings as printed by `scoperag config` (the API key masked)."""
        view = self.model_dump(mode="json")
        view["qdrant_api_key"] = "***" if self.qdrant_api_key else None
        view["http_token"] = "***" if self.http_token else None
        view["effective_backend"] = self.effective_backend
        view["effective_embed_model"] = self.effective_embed_model
        view["effective_embed_batch_threads"] = self.effective_embed_batch_threads
        return view


def env_name(field: str) -> str:
    """The environment variable of a settings field, e.g. `SCOPERAG_DATA_DIR`."""
    return f"SCOPERAG_{field.upper()}"


def describe_config_error(
    exc: ValidationError, options: Mapping[str, tuple[str, object]] | None = None
) -> str:
    """The problems on one line, each naming where the value came from (the environment
    variable, or the command-line option given in `options` as field -> (option, value)), the
    value and what is accepted; no pydantic URLs or error codes."""
    options = options or {}
    problems = []
    for error in exc.errors(include_url=False):
        message = error["msg"].removeprefix("Value error, ")
        if not error["loc"]:  # a rule across fields names its variables itself
            problems.append(message)
            continue
        field = str(error["loc"][0])
        where, value = options.get(field, (env_name(field), os.environ.get(env_name(field))))
        if value is None:
            value = error.get("input")
        problems.append(f"{where}={value!r}: {message}")
    return "; ".join(problems)
