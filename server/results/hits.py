"""Where a tool's answer keeps its hits, read the same way by every surface.

    hits_of(tool: str, result: Mapping | BaseModel) -> list[Hit]

`tool` is the MCP tool's name, `result` its structured answer (a dict as the client received
it, or the pydantic model the tool returned). Each `Hit` is the hit's `text`, its other
`fields` (a `metadata` object merged in, `explain` left out) and its `explain` (None without
it). Which list holds the hits and which key holds the text is the `HitShape` the tool's
profile declares (`Profile.hits`); a tool no profile declares keeps them in `hits`, the text
under `text`. A result without that list has no hits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from scoperag.retrievers.explain import Names, payload_names
from scoperag.server.profiles import declarations
from scoperag.server.profiles.declaration import Profile
from scoperag.server.results.shape import HitShape

if TYPE_CHECKING:
    from scoperag.core.engine.backend import VectorBackend


class Hit(NamedTuple):
    """One hit as every surface reads it."""

    text: str
    fields: dict[str, Any]
    explain: dict[str, Any] | None


def profile_of(tool: str) -> Profile | None:
    """The profile whose tool `tool` is (None: no installed profile's)."""
    return next((p for p in declarations() if tool in {*p.methods.values(), *p.hits}), None)


def shape_of(tool: str) -> HitShape:
    """The shape of `tool`'s answer, as its profile declares it (else the default shape)."""
    profile = profile_of(tool)
    return profile.hits.get(tool, HitShape()) if profile is not None else HitShape()


def _data(result: Any) -> Any:
    return result.model_dump(mode="json") if hasattr(result, "model_dump") else result


def _listed(tool: str, data: Any) -> list[dict[str, Any]]:
    listed = data.get(shape_of(tool).hits) if isinstance(data, Mapping) else None
    return [item for item in listed if isinstance(item, dict)] if isinstance(listed, list) else []


def hits_of(tool: str, result: Any) -> list[Hit]:
    """The hits of `tool`'s `result`, in their order (see the module's docstring)."""
    text_key = shape_of(tool).text
    hits = []
    for item in _listed(tool, _data(result)):
        extra = item.get("metadata")
        fields = {**extra} if isinstance(extra, dict) else {}
        fields.update((k, v) for k, v in item.items() if k not in ("metadata", "explain"))
        text = fields.pop(text_key, None)
        hits.append(Hit(text if isinstance(text, str) else "", fields, item.get("explain")))
    return hits


def without_explain(tool: str, result: Mapping[str, Any]) -> dict[str, Any]:
    """`result` and its hits without their `explain` (what a search prints without it)."""
    key = shape_of(tool).hits
    plain = {name: value for name, value in result.items() if name != "explain"}
    if isinstance(plain.get(key), list):
        plain[key] = [
            {k: v for k, v in hit.items() if k != "explain"} if isinstance(hit, dict) else hit
            for hit in plain[key]
        ]
    return plain


def drop_names(tool: str, backend: VectorBackend, collection: str) -> Names:
    """How `tool`'s explanation names a dropped candidate: by its shape's identity fields,
    read from the point's payload, as its hits are named."""
    return payload_names(backend, collection, shape_of(tool).identity)
