"""Errors of the Edge engine as messages a person can act on (raised by
`core.engine.store_check.CheckedShard`, where the engine's errors are translated)."""

from __future__ import annotations

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
