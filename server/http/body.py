"""Reading a JSON request body: media type, UTF-8, nesting and shape refused with a reason."""

from __future__ import annotations

import json
from typing import Any

from scoperag.core.errors import InvalidParameterError, ScoperagError

JSON_MEDIA_TYPE = "application/json"
_OBJECT_RULE = 'a JSON object such as {"query": "..."}'


class UnsupportedMediaTypeError(ScoperagError):
    """HTTP 415: the body is not declared as JSON."""

    def __init__(self, content_type: str | None) -> None:
        self.content_type = content_type
        super().__init__(
            f"Content-Type {content_type!r} is not accepted: send the body as JSON with the "
            f"header 'Content-Type: {JSON_MEDIA_TYPE}'."
        )


def _clip(text: str, most: int = 200) -> str:
    """The start of a refused body: enough to recognise it, never the whole of a big one."""
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


def json_object(raw: bytes, content_type: str | None) -> dict[str, Any]:
    """The body as a JSON object; raises `UnsupportedMediaTypeError` or `InvalidParameterError`
    (parameter `body`, the value shortened) naming what is wrong."""
    media_type = (content_type or "").split(";")[0].strip().lower()
    if media_type != JSON_MEDIA_TYPE:
        raise UnsupportedMediaTypeError(content_type)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(
            "body",
            _clip(raw.decode("utf-8", errors="replace")),
            f"valid UTF-8 (byte {exc.start} is not); {_OBJECT_RULE}",
        ) from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise InvalidParameterError(
            "body", _clip(text), f"JSON nested a few levels deep at most; {_OBJECT_RULE}"
        ) from None
    except ValueError as exc:
        raise InvalidParameterError("body", _clip(text), f"{_OBJECT_RULE} ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidParameterError("body", _clip(text), _OBJECT_RULE)
    return data
