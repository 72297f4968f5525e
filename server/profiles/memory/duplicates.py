"""`find_duplicates`: groups of memories with the same text (case and whitespace aside) or
embeddings at least `threshold` alike, the neighbour search done by the engine
(`VectorBackend.neighbours`)."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from qdrant_client import models

from scoperag.core.contracts.memory import COLLECTION, CURRENT, TAGS_ANY, normalise_tags
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.core.errors import InvalidParameterError
from scoperag.core.filters.fields import build_filter, empty_selection
from scoperag.server.profiles.memory.models import (
    DUPLICATE_FILTERS,
    DuplicateGroup,
    DuplicateMember,
    DuplicatesOptions,
    FindDuplicatesResult,
)
from scoperag.server.runtime import Runtime

NEIGHBOURS_PER_MEMORY = 20  # each memory's nearest look-alikes the engine returns
THRESHOLDS = "a cosine similarity greater than 0 and at most 1, e.g. 0.92"
EMPTY_NOTE = "No memories are stored yet, so there is nothing to compare."
PointId = int | str
_MEMBER_KEYS = [key for key in DuplicateMember.model_fields if key != "similarity"]


def candidate_filter(tags: list[str] | None, memory_type: str | None) -> models.Filter | None:
    """The memories compared: current ones (neither superseded nor expired), with any of the
    tags and of the type, as `search` filters them."""
    values = {"tags": tags, "memory_type": memory_type}
    return build_filter([*DUPLICATE_FILTERS, *CURRENT], values, now=time.time())


def normalised(text: str) -> str:
    """The text compared for "same text": case folded, runs of whitespace as one space."""
    return " ".join(text.casefold().split())


class Duplicates:
    """The `find_duplicates` handler over one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def find(self, params: DuplicatesOptions) -> FindDuplicatesResult:
        return find_duplicates(self.runtime, params)


def find_duplicates(runtime: Runtime, params: DuplicatesOptions) -> FindDuplicatesResult:
    """Groups of duplicates, largest first then newest first, at most `params.limit`."""
    threshold = params.threshold
    if not 0 < threshold <= 1:  # NaN included
        raise InvalidParameterError("threshold", threshold, THRESHOLDS)
    tags = normalise_tags(params.tags)
    memory_type = (params.memory_type or "").strip() or None
    if reason := empty_selection([TAGS_ANY], {"tags": tags}):
        return FindDuplicatesResult(groups=[], total_groups=0, note=reason)
    backend = runtime.backend
    if not backend.collection_exists(COLLECTION):
        return FindDuplicatesResult(groups=[], total_groups=0, note=EMPTY_NOTE)
    flt = candidate_filter(tags, memory_type)
    count = backend.count(COLLECTION, flt)
    if not count:
        note = "No memory has these tags and type." if tags or memory_type else EMPTY_NOTE
        return FindDuplicatesResult(groups=[], total_groups=0, note=note)
    records = {r.id: r.payload or {} for r in backend.scroll(COLLECTION, flt, limit=count)}
    pairs = backend.neighbours(COLLECTION, flt, threshold, NEIGHBOURS_PER_MEMORY)
    components = _components(records, [(first, second) for first, second, _ in pairs])
    ordered = sorted(components, key=lambda ids: (-len(ids), _age(records[ids[0]])))
    shown = ordered[: params.limit]
    cosines = _cosines(runtime, shown)
    groups = [_group(records, ids, cosines) for ids in shown]
    note = None
    if not ordered:
        note = f"No duplicates among {count} memories at threshold {threshold}."
    elif len(ordered) > len(groups):
        note = f"The {len(groups)} largest of {len(ordered)} groups; raise limit to see more."
    return FindDuplicatesResult(groups=groups, total_groups=len(ordered), note=note)


def _age(payload: dict[str, Any]) -> tuple[int, float, str]:
    """Sorts newest first: the unique order key, then the time and the hash (older stores)."""
    order, time = payload.get("created_order") or 0, payload.get("created_at_ts") or 0.0
    return (-order, -time, payload.get("content_hash", ""))


def _components(
    records: dict[PointId, dict[str, Any]], pairs: list[tuple[PointId, PointId]]
) -> list[list[PointId]]:
    """Union-find over the neighbour pairs and the same-text links: each set of two or more
    point ids, newest first."""
    parent = {point: point for point in records}

    def root(point: PointId) -> PointId:
        while parent[point] != point:
            parent[point] = parent[parent[point]]
            point = parent[point]
        return point

    by_text: dict[str, list[PointId]] = defaultdict(list)
    for point, payload in records.items():
        by_text[normalised(payload.get("content", ""))].append(point)
    links = [(same[0], other) for same in by_text.values() for other in same[1:]]
    for first, second in [*pairs, *links]:
        if first in parent and second in parent:  # a point written since the listing: left out
            parent[root(first)] = root(second)
    sets: dict[PointId, list[PointId]] = defaultdict(list)
    for point in records:
        sets[root(point)].append(point)
    return [
        sorted(ids, key=lambda point: _age(records[point])) for ids in sets.values() if len(ids) > 1
    ]


def _group(
    records: dict[PointId, dict[str, Any]], ids: list[PointId], cosines: dict[PointId, float]
) -> DuplicateGroup:
    """A group's members: the newest, then the others by their cosine to it."""
    members = [
        DuplicateMember(
            **{key: records[point][key] for key in _MEMBER_KEYS},
            similarity=1.0 if point == ids[0] else round(cosines.get(point, 0.0), 4),
        )
        for point in ids
    ]
    newest, rest = members[0], members[1:]
    rest.sort(key=lambda member: -member.similarity)  # stable: newest first among equals
    texts = {normalised(member.content) for member in members}
    reason = "same text" if len(texts) == 1 else "similar"
    return DuplicateGroup(reason=reason, members=[newest, *rest])


def _cosines(runtime: Runtime, groups: list[list[PointId]]) -> dict[PointId, float]:
    """Each member's cosine to its group's newest (first) member, from the stored vectors of
    every member, read in one call (a member deleted meanwhile has none)."""
    import numpy  # here, not at start-up

    ids = [point for group in groups for point in group]
    if not ids:
        return {}
    flt = models.Filter(must=[models.HasIdCondition(has_id=ids)])
    records = runtime.backend.scroll(COLLECTION, flt, limit=len(ids), with_vectors=True)
    unit = {}
    for record in records:
        vector = record.vector[DENSE_VECTOR] if isinstance(record.vector, dict) else record.vector
        unit[record.id] = numpy.asarray(vector) / (numpy.linalg.norm(vector) or 1.0)
    return {
        point: float(unit[point] @ unit[group[0]])
        for group in groups
        for point in group
        if point in unit and group[0] in unit
    }
