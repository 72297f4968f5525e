"""JSON for what crosses between processes: engine arguments, results and errors.

Values keep their types: pydantic models (`qdrant_client.models`, LlamaIndex nodes) travel as
their JSON dump tagged with their class, dataclasses (`VectorStoreQuery`, its
result) field by field, enums by value, datetimes and dates as ISO text
(a time zone kept, a naive one left naive), dicts as key/value pairs (facet counts have integer
and boolean keys).
Only classes of the libraries the engine speaks are rebuilt; anything else is refused.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from datetime import date, datetime
from enum import Enum
from functools import cache
from typing import Any

from pydantic import BaseModel

from scoperag.core.errors import ScoperagError

_TRUSTED = ("qdrant_client.", "llama_index.", "scoperag.")
_SCALARS = (str, int, float, bool, type(None))


def _path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


@cache
def _class(path: str, trusted: tuple[str, ...] = _TRUSTED) -> type:
    module, _, name = path.partition(":")
    if not module.startswith(trusted):
        raise ScoperagError(
            f"Refusing to rebuild {path!r} from another process: not an engine type."
        )
    target: Any = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    return target


def encode(value: Any) -> Any:
    """`value` as plain JSON data that `decode` turns back into the same types."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Enum):
        return {"__enum__": _path(type(value)), "value": value.value}
    if isinstance(value, datetime):
        return {"__datetime__": value.isoformat()}
    if isinstance(value, date):
        return {"__date__": value.isoformat()}
    if isinstance(value, BaseModel):
        return {"__model__": _path(type(value)), "data": value.model_dump(mode="json")}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"__dataclass__": _path(type(value)), "fields": fields}
    if isinstance(value, dict):
        return {"__map__": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, list | tuple | set | frozenset):
        return [encode(item) for item in value]
    if hasattr(value, "__next__"):  # an iterator (e.g. `points`): its items, materialised
        return [encode(item) for item in value]
    raise ScoperagError(f"Cannot send a {type(value).__name__} to another process: {value!r}.")


def decode(data: Any) -> Any:
    """The value `encode` produced `data` from."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        return data
    if "__enum__" in data:
        return _class(data["__enum__"])(data["value"])
    if "__datetime__" in data:
        return datetime.fromisoformat(data["__datetime__"])
    if "__date__" in data:
        return date.fromisoformat(data["__date__"])
    if "__model__" in data:
        return _class(data["__model__"]).model_validate(data["data"])
    if "__dataclass__" in data:
        fields = {name: decode(value) for name, value in data["fields"].items()}
        return _class(data["__dataclass__"])(**fields)
    if "__map__" in data:
        return {_hashable(decode(k)): decode(v) for k, v in data["__map__"]}
    raise ScoperagError(f"Unexpected data from another process: {str(data)[:200]}.")


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def encode_error(error: BaseException) -> str:
    """An exception as a JSON message that `decode_error` turns back into the same class."""
    return json.dumps({"error": _path(type(error)), "message": str(error)})


def decode_error(message: str) -> Exception:
    """The exception `encode_error` described, with the same class and message.

    Classes of the engine's libraries and Python's built-in errors come back as themselves; an
    unknown one becomes a `RuntimeError` naming it, so nothing is silently turned into success.
    """
    try:
        described = json.loads(message)
        path, text = described["error"], described["message"]
    except (ValueError, KeyError, TypeError):
        return RuntimeError(f"The store's owner process failed: {message}")
    try:
        cls = _class(path, _TRUSTED + ("builtins",))
    except (ScoperagError, ImportError, AttributeError):
        return RuntimeError(f"{path}: {text}")
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        return RuntimeError(f"{path}: {text}")
    error = cls.__new__(cls)
    Exception.__init__(error, text)  # custom __init__ signatures differ; the message is the same
    return error
