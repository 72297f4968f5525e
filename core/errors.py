"""Errors a person can act on: what was wrong, the value given, what is accepted."""

from __future__ import annotations

import errno
import json
import os
import re

_MOST = 200  # characters of a value echoed back in an error


def as_json(value: object, most: int = _MOST) -> str:
    """`value` as JSON (`null`, `"text"`, `[1, 2]`; anything else by its repr, as a JSON
    string), cut to `most` characters so a huge argument is never echoed back whole."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    text = text.encode("utf-8", errors="backslashreplace").decode("utf-8")  # lone surrogates
    if len(text) <= most:
        return text
    return f"{text[:most]}... ({len(text)} characters)"


def _finite(value: object) -> bool:
    return isinstance(value, float) and value == value and abs(value) != float("inf")


class ScoperagError(Exception):
    """Base of every error whose message is meant for the user as it is."""

    def details(self) -> dict[str, object]:
        """What a program reading the error may want beside its message (none by default)."""
        return {}


def error_code(error: ScoperagError) -> str:
    """The error's kind as snake case, from its class: `InvalidParameterError` ->
    `invalid_parameter`."""
    name = type(error).__name__.removesuffix("Error") or "scoperag"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def error_body(error: ScoperagError) -> dict[str, object]:
    """The one JSON shape of an error (HTTP and the web UI): `error` (its kind), `message`
    (what to tell a person) and its details (`field`, `value`, `rule` for a refused value)."""
    return {"error": error_code(error), "message": str(error), **error.details()}


class InvalidParameterError(ScoperagError, ValueError):
    """A parameter value that is not accepted."""

    def __init__(self, parameter: str, value: object, accepted: str) -> None:
        self.parameter = parameter
        self.value = value
        self.accepted = accepted
        super().__init__(
            f"Invalid value for '{parameter}': {as_json(value)}. Accepted: {accepted}."
        )

    def details(self) -> dict[str, object]:
        value = self.value
        plain = value is None or isinstance(value, bool | int) or _finite(value)
        short = isinstance(value, str) and len(value) <= _MOST
        shown = value if plain or short else as_json(value)
        return {"field": self.parameter, "value": shown, "rule": self.accepted}


class StoreLockedError(ScoperagError):
    """The embedded store is open in another process, and this use cannot go through it."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"The embedded store at {path} is already open in another process. scoperag "
            "processes share a store through the one holding it, but this one needs it alone "
            "(e.g. `scoperag migrate`) or the holder does not answer. `scoperag status` shows "
            "which process it is: stop it and try again."
        )


class EmbedderMismatchError(ScoperagError):
    """A collection queried or written with another embedder than the one that built it."""

    def __init__(self, collection: str, stored: str, current: str) -> None:
        super().__init__(
            f"Collection '{collection}' was built with {stored}, but the current embedder is "
            f"{current}. Set SCOPERAG_EMBED_PROVIDER / SCOPERAG_EMBED_MODEL / "
            f"SCOPERAG_EMBED_DIMENSIONS back to match it, or re-ingest into a new collection to "
            "change models."
        )


class EmbeddingServiceError(ScoperagError):
    """The embedding service could not produce vectors (unreachable, model missing, ...)."""


class QdrantUnreachableError(ScoperagError):
    """The Qdrant server named by SCOPERAG_QDRANT_URL does not answer (or refuses the key)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(
            f"Cannot reach the Qdrant server at {url} ({reason}). Check that the server is "
            "running and that SCOPERAG_QDRANT_URL is right (scheme, host and port, e.g. "
            "http://localhost:6333; `docker compose up -d qdrant` starts one), and "
            "SCOPERAG_QDRANT_API_KEY if it needs one; or unset SCOPERAG_QDRANT_URL to use the "
            "embedded store."
        )


class ReadOnlyStoreError(ScoperagError):
    """A write to a store opened read-only (its file system or permissions allow no writing)."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"The store at {path} is read-only: its file system, or your permissions, allow no "
            "writing, so searches, listings and `scoperag check` work and every change is "
            "refused. To change it, make that folder writable for this user, or copy the data "
            "dir somewhere writable and point SCOPERAG_DATA_DIR at the copy."
        )


class StorePermissionError(ScoperagError):
    """A store file this process may not read or write: its permissions, not damage."""

    def __init__(self, path: object, access: str, error: OSError) -> None:
        self.path, self.access = path, access
        why = "its file system is mounted read-only" if error.errno == errno.EROFS else "denied"
        super().__init__(
            f"No permission to {access} {path} ({why}: {error.strerror}). The file is not "
            f"damaged: give the user running scoperag (uid {os.getuid()}) {access} permission "
            "on it and on the folders above it (chmod, chown, or the mount's options), or run "
            "scoperag as the user who owns the data dir."
        )


class ConflictError(ScoperagError):
    """A compare-and-set write lost: what it was based on changed before it was made."""
