"""What crosses the owner's socket: JSON-RPC 2.0, one JSON object per line, fixed types.

A typed value is `{"$type": name, "value": ...}` with `name` from `types()` alone, so nothing
received names code to run. An error travels as its message, class name and module; it is raised
again as itself when `error_class` accepts them: a `ScoperagError` subclass defined in one of the
package's modules (found on disk, and only that one imported), or one of a few builtins.
"""

from __future__ import annotations

import importlib
import importlib.util
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


BUILTIN_ERRORS = {
    cls.__name__: cls
    for cls in (ValueError, TypeError, KeyError, RuntimeError, OSError, TimeoutError)
}


def _package_module(module: str) -> bool:
    """Whether `module` is a module of this package, as the import system finds it (which imports
    its parent packages alone); a `__main__`, which runs a command, is not one."""
    parts = module.split(".")
    if parts[0] != "scoperag" or len(parts) < 2 or parts[-1] == "__main__":
        return False
    if not all(part.isidentifier() for part in parts):
        return False
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def error_class(module: Any, name: Any) -> type[Exception] | None:
    """The error class `name` of `module` if it may be raised again from the wire: a builtin of
    `BUILTIN_ERRORS`, or a `ScoperagError` subclass defined in a module of the package."""
    if not isinstance(module, str) or not isinstance(name, str):
        return None
    if module == "builtins":
        return BUILTIN_ERRORS.get(name)
    if not name.isidentifier() or not _package_module(module):
        return None
    cls = getattr(importlib.import_module(module), name, None)
    if not (isinstance(cls, type) and issubclass(cls, ScoperagError)):
        return None
    return cls if (cls.__module__, cls.__name__) == (module, name) else None


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
    """A JSON-RPC error object for `error`: its message, and its class name and module where
    `error_class` accepts them (else the message names the class)."""
    cls = type(error)
    known = error_class(cls.__module__, cls.__name__) is cls
    message = str(error) if known else f"{cls.__name__}: {error}"
    data = {"type": cls.__name__, "module": cls.__module__} if known else {"type": None}
    return {"code": -32000, "message": message, "data": data}


def raised(error: dict[str, Any]) -> Exception:
    """The exception a JSON-RPC error object describes, as its own class where known."""
    message = str(error.get("message", ""))
    data = error.get("data")
    data = data if isinstance(data, dict) else {}
    cls = error_class(data.get("module"), data.get("type"))
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
