"""What crosses the owner's socket: JSON-RPC 2.0, one JSON object per line, fixed types.

A typed value is `{"$type": name, "value": ...}` with `name` from `types()` alone, so nothing
received names code to run; an error travels as a class name from `errors()` and a message.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from enum import Enum
from functools import cache
from typing import IO, Any

import pydantic_core
from pydantic import BaseModel

from scoperag.core.errors import ScoperagError


class WireError(ScoperagError):
    """A message on the owner's socket that this protocol does not accept."""


@cache
def types() -> dict[str, type]:
    """Name -> class of every typed value the wire carries: qdrant-client's models (filters,
    orders, points, hits), a search's request and result, and dates."""
    from qdrant_client import models

    from scoperag.core.engine.search_request import SearchRequest, SearchResult

    module = models.Filter.__module__  # the generated models, not what they import
    found = [c for c in vars(models).values() if getattr(c, "__module__", None) == module]
    return {c.__name__: c for c in [*found, SearchRequest, SearchResult, datetime, date]}


@cache
def errors() -> dict[str, type[BaseException]]:
    """Name -> class of every error raised again as itself on the other side."""
    from scoperag.core import errors
    from scoperag.core.embedding import ollama
    from scoperag.core.engine import index_status
    from scoperag.core.engine.edge import backend as edge_backend
    from scoperag.core.engine.edge import conversion as edge_filters
    from scoperag.core.engine.edge import errors as edge_errors

    modules = (errors, edge_backend, edge_errors, edge_filters, index_status, ollama)
    found = [getattr(module, name) for module in modules for name in dir(module)]
    found += [WireError, ValueError, TypeError, KeyError, RuntimeError, OSError, TimeoutError]
    return {c.__name__: c for c in found if isinstance(c, type) and issubclass(c, Exception)}


def encode(value: Any) -> Any:
    """`value` as JSON data that `decode` turns back into the same types."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [encode(item) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: encode(item) for key, item in value.items()}
    if isinstance(value, dict):
        return {"$type": "map", "value": [[encode(k), encode(v)] for k, v in value.items()]}
    name = type(value).__name__
    if types().get(name) is not type(value):
        raise WireError(f"Cannot send a {name} to another process: not a wire type.")
    if isinstance(value, BaseModel):
        return {"$type": name, "value": value.model_dump(mode="json", by_alias=True)}
    return {"$type": name, "value": value.value if isinstance(value, Enum) else value.isoformat()}


def decode(data: Any) -> Any:
    """The value `encode` produced `data` from."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        return data
    if "$type" not in data:
        return {key: decode(item) for key, item in data.items()}
    name, value = data["$type"], data.get("value")
    if name == "map":
        return {decode(k): decode(v) for k, v in value}
    cls: Any = types().get(name)
    if cls is None:
        raise WireError(f"Unknown type on the owner's socket: {json.dumps(name)[:100]}.")
    if issubclass(cls, BaseModel):
        return cls.model_validate(value)
    return cls(value) if issubclass(cls, Enum) else cls.fromisoformat(value)


def error_data(error: BaseException) -> dict[str, Any]:
    """A JSON-RPC error object for `error`: its class name (if in `errors()`) and message."""
    name = type(error).__name__
    known = errors().get(name) is type(error)
    message = str(error) if known else f"{name}: {error}"
    return {"code": -32000, "message": message, "data": {"type": name if known else None}}


def raised(error: dict[str, Any]) -> Exception:
    """The exception a JSON-RPC error object describes, as its own class where known."""
    message = str(error.get("message", ""))
    cls = errors().get(str((error.get("data") or {}).get("type")))
    if cls is None:
        return RuntimeError(f"The store's owner process failed: {message}")
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)  # custom __init__ signatures differ; the message is kept
    return exc


def send(stream: IO[bytes], message: dict[str, Any]) -> None:
    """Write one message as one line (JSON escapes every newline inside it)."""
    message = {"jsonrpc": "2.0", **message}
    try:  # pydantic's serializer: a tenth of the json module's time for a query's vector
        line = pydantic_core.to_json(message)
    except ValueError:  # a lone surrogate, which only the json module writes (as an escape)
        line = json.dumps(message, separators=(",", ":")).encode()
    stream.write(line + b"\n")
    stream.flush()


def receive(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message, or None at the end of the stream."""
    line = stream.readline()
    if not line:
        return None
    try:
        message = pydantic_core.from_json(line)
    except ValueError:  # a lone surrogate (see `send`), or not JSON: the json module says which
        message = json.loads(line)
    if not isinstance(message, dict):
        raise WireError("A message on the owner's socket must be a JSON object.")
    return message
