"""How a profile's pipeline cuts its sources into chunks: a parameter of ingestion, recorded
in the collection's metadata and kept on the next ingestion unless changed.

pdf pages and docs are split by LlamaIndex's `SentenceSplitter` (`chunk_size`, `chunk_overlap`
in tokens); books into windows of sentences (`window`, `window_overlap`). A notebook may pass
its own LlamaIndex transformations instead; the collection then records their class names.
"""

from __future__ import annotations

from typing import Annotated, Any, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from scoperag.core.errors import InvalidParameterError

METADATA_KEY = "chunking"  # the collection metadata key of the setting in use
PARAMETERS = ("chunk_size", "chunk_overlap", "window", "window_overlap")

# The ingestion parameters (tools, CLI, Python); None: the collection's setting, else the default
ChunkSize = Annotated[
    int | None,
    Field(
        default=None,
        description="Tokens per chunk (64-8192); default: the collection's setting, else 256.",
    ),
]
ChunkOverlap = Annotated[
    int | None,
    Field(
        default=None,
        description="Tokens neighbouring chunks share (below chunk_size); default: the "
        "collection's setting, else 32.",
    ),
]
Window = Annotated[
    int | None,
    Field(
        default=None,
        description="Sentences per chunk (1-200); default: the collection's setting, else 6.",
    ),
]
WindowOverlap = Annotated[
    int | None,
    Field(
        default=None,
        description="Sentences neighbouring chunks share (below window); default: the "
        "collection's setting, else 2.",
    ),
]


def chunking_of(params: BaseModel) -> dict[str, int | None]:
    """The chunking values an ingestion call's parameters carry."""
    return {key: getattr(params, key) for key in PARAMETERS if key in type(params).model_fields}


class Chunking(BaseModel):
    """A profile's chunking: the node parser's settings, or the transformations given."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    transformations: list[str] | None = Field(
        default=None, description="Class names of the LlamaIndex transformations a caller gave."
    )

    def parameters(self) -> dict[str, Any]:
        """The settings as the ingestion parameters name them (only the transformations'
        names when a caller gave its own)."""
        if self.transformations is not None:
            return {"transformations": self.transformations}
        return self.model_dump(exclude_none=True)


class TextChunking(Chunking):
    """pdf and docs: LlamaIndex's `SentenceSplitter`."""

    chunk_size: int = Field(default=256, ge=64, le=8192, description="Tokens per chunk.")
    chunk_overlap: int = Field(default=32, ge=0, description="Tokens shared by neighbours.")

    @model_validator(mode="after")
    def _overlap_below_size(self) -> Self:
        if self.chunk_overlap >= self.chunk_size:
            raise InvalidParameterError(
                "chunk_overlap",
                self.chunk_overlap,
                f"an integer below chunk_size ({self.chunk_size})",
            )
        return self


class WindowChunking(Chunking):
    """books: windows of consecutive sentences of a chapter."""

    window: int = Field(default=6, ge=1, le=200, description="Sentences per chunk.")
    window_overlap: int = Field(default=2, ge=0, description="Sentences shared by neighbours.")

    @model_validator(mode="after")
    def _overlap_below_window(self) -> Self:
        if self.window_overlap >= self.window:
            raise InvalidParameterError(
                "window_overlap", self.window_overlap, f"an integer below window ({self.window})"
            )
        return self


C = TypeVar("C", bound=Chunking)


def resolve(
    kind: type[C],
    recorded: dict[str, Any] | None,
    given: dict[str, Any],
    transformations: list[Any] | None = None,
) -> C:
    """The chunking of this ingestion: the values `given` (None: not given) over the ones the
    collection recorded over the defaults; a value out of range is an error naming it."""
    values = {
        key: value
        for key, value in (recorded or {}).items()
        if key in kind.model_fields and key != "transformations"
    }
    values |= {key: value for key, value in given.items() if value is not None}
    if transformations is not None:
        values["transformations"] = [type(step).__name__ for step in transformations]
    try:
        return kind(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        parameter = str(first["loc"][0]) if first["loc"] else "chunking"
        cause = first.get("ctx", {}).get("error")
        if isinstance(cause, InvalidParameterError):
            raise cause from None
        field = kind.model_fields.get(parameter)
        accepted = _bounds(field) if field is not None else ", ".join(kind.model_fields)
        raise InvalidParameterError(parameter, values.get(parameter), accepted) from None


def _bounds(field: Any) -> str:
    low = next((m.ge for m in field.metadata if hasattr(m, "ge")), None)
    high = next((m.le for m in field.metadata if hasattr(m, "le")), None)
    if high is None:
        return f"an integer of at least {low}"
    return f"an integer from {low} to {high}"


def recorded(backend: Any, collection: str) -> dict[str, Any] | None:
    """The chunking the collection recorded (None: none yet, or no collection)."""
    if not backend.collection_exists(collection):
        return None
    return backend.collection_metadata(collection).get(METADATA_KEY)


def record(backend: Any, collection: str, chunking: Chunking) -> None:
    """Record `chunking` as the collection's (after an ingestion wrote with it)."""
    if backend.collection_exists(collection):
        backend.update_collection_metadata(collection, {METADATA_KEY: chunking.parameters()})
