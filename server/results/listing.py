"""A search result as a person reads it: one block per hit with its rank, score and
similarity, where it came from (the profile's declared `source`) and its text wrapped to the
terminal, newlines kept; under the hits, once, what the score and the similarity are.

`scoperag search` prints it by default (`--json` prints the tool's result as it is); the web UI
shows the same text.
"""

from __future__ import annotations

import string
import textwrap
from typing import Any

from scoperag.server.results.hits import hits_of, profile_of
from scoperag.server.results.shape import FUSION_WORDS, SIMILARITY_WORDS

INDENT = "   "
# fields a result carries beside its hits that a person should read after them
NOTE_KEYS = ("message", "note")
# fields never shown as "where it came from" when a profile declares no `source`
_FIGURES = {"score", "fusion", "similarity", "name_similarity", "match"}
_SHORT = 40  # a field longer than this is not part of a hit's source line


def _shown(value: Any) -> str:
    """A field as text: a list comma-separated, a missing value as "-"."""
    if value is None or value == [] or value == "":
        return "-"
    if isinstance(value, list):
        return ", ".join(_shown(item) for item in value)
    return str(value)


class _SourceFormatter(string.Formatter):
    """`str.format` over a hit's fields, where a missing or empty field reads "-"."""

    def get_value(self, key: int | str, args: Any, kwargs: Any) -> Any:
        return kwargs.get(key) if isinstance(key, str) else super().get_value(key, args, kwargs)

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return format(value, format_spec)
            except ValueError:  # a text spec (`.10`) on a number: the number as text
                pass
        return format(_shown(value), format_spec)


def _default_source(fields: dict[str, Any]) -> str:
    """The short fields of a hit, `key value` joined by " · ", for a profile with no `source`."""
    shown = [
        f"{key} {_shown(value)}"
        for key, value in fields.items()
        if key not in _FIGURES and not isinstance(value, dict) and value is not None
    ]
    return " · ".join(item for item in shown if len(item) <= _SHORT)


def source_line(template: str | None, fields: dict[str, Any]) -> str:
    """Where a hit came from: `template` filled from `fields`, or its short fields."""
    if template is None:
        return _default_source(fields)
    return _SourceFormatter().vformat(template, (), fields)


def _wrapped(text: str, width: int) -> list[str]:
    """`text` wrapped to `width` columns after the indent, each of its own lines kept."""
    room = max(20, width - len(INDENT))
    lines: list[str] = []
    for line in text.splitlines():
        lines += textwrap.wrap(line, room, break_on_hyphens=False) or [""]
    return [INDENT + line if line else "" for line in lines]


def _figure(name: str, value: Any) -> str | None:
    return f"{name} {value:.4g}" if isinstance(value, (int, float)) else None


def _figures(fields: dict[str, Any]) -> str:
    shown = [
        _figure("score", fields.get("score")),
        _figure("similarity", fields.get("similarity")),
        _figure("name similarity", fields.get("name_similarity")),
    ]
    return " · ".join(item for item in shown if item) or "score -"


def legend(fusions: set[str]) -> str:
    """What the score and the similarity are, said once under the hits."""
    named = [FUSION_WORDS[fusion] for fusion in sorted(fusions) if fusion in FUSION_WORDS]
    score = f"score orders the hits: {'; '.join(named)}" if named else "score orders the hits"
    return f"{score}; {SIMILARITY_WORDS}."


def render_hits(tool: str, result: dict[str, Any], width: int) -> str:
    """The hits of `tool`'s `result` as text blocks at most `width` columns wide.

    Where each hit came from is its profile's `source` (a tool no profile declares: the hits'
    short fields). The result's `message` and `note` follow the hits.
    """
    profile = profile_of(tool)
    template = profile.source if profile is not None else None
    context = {k: v for k, v in result.items() if not isinstance(v, (list, dict))}
    blocks, fusions = [], set()
    for rank, hit in enumerate(hits_of(tool, result), 1):
        fields = {**context, **hit.fields}
        fusions.add(fields.get("fusion"))
        head = f"{rank}. {_figures(fields)}  {source_line(template, fields)}".rstrip()
        heads = textwrap.wrap(head, max(20, width), subsequent_indent=INDENT) or [head]
        blocks.append("\n".join([*heads, *_wrapped(hit.text, width)]))
    if blocks:
        blocks.append(textwrap.fill(legend(fusions - {None}), width))
    else:
        blocks.append("no hits")
    notes = [textwrap.fill(str(result[key]), width) for key in NOTE_KEYS if result.get(key)]
    return "\n\n".join(blocks) + "".join(f"\n\n{note}" for note in notes)
