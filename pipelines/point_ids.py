"""Deterministic point ids: the same thing ingested again gets the same id, and overwrites."""

from __future__ import annotations

import uuid

_NAMESPACE = uuid.UUID("6f1c3a52-5a8e-4d0e-9b52-7c1d2e3f4a5b")


def stable_id(*parts: object) -> str:
    """A UUID derived from the parts, so re-ingesting the same thing overwrites it."""
    return str(uuid.uuid5(_NAMESPACE, "/".join(str(part) for part in parts)))
