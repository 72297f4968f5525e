"""Errors of the Edge engine turned into messages a person can act on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from scoperag.core.engine.error_kinds import is_missing_index
from scoperag.core.errors import ScoperagError


class MissingIndexError(ScoperagError):
    """order_by or facet on a payload key that has no suitable payload index."""

    def __init__(self, collection: str, key: str, use: str) -> None:
        kinds = "integer, float or datetime" if use == "order_by" else "keyword, integer or bool"
        super().__init__(
            f"Collection '{collection}' has no {kinds} payload index on '{key}', which {use} "
            f"needs on the edge engine. Declare '{key}' as a FilterableField of that type in the "
            "profile's required_indexes, then restart (indexes are ensured at start-up)."
        )


@contextmanager
def missing_index(collection: str, key: str, use: str) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        if is_missing_index(exc):
            raise MissingIndexError(collection, key, use) from None
        raise
