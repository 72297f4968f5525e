"""Which engine errors mean what, where the engine gives no exception type to tell them apart.

The only module that reads an engine's error messages: each gap is written up as an upstream
report in `docs/upstream.md`, and `tests/test_engine_errors.py` fails when a message changes.
"""

from __future__ import annotations

# qdrant-edge-py raises a plain `Exception`: "No range index for `order_by` key: ..." or
# "No appropriate index for faceting: ...".
_EDGE_NO_INDEX = "index for"
# ... and "Service runtime error: ..." / "Service internal error: ..." when its storage fails,
# which is damage unless the machine ran out of something
_EDGE_STORAGE = ("Service runtime error", "Service internal error")
_EDGE_NOT_DAMAGE = ("Not enough space", "No space left", "Too many open files", "Cannot allocate")


def is_missing_index(error: BaseException) -> bool:
    """Qdrant Edge refused an order_by or a facet because the key has no suitable index."""
    return type(error) is Exception and _EDGE_NO_INDEX in str(error)


def is_store_locked(error: BaseException) -> bool:
    """qdrant-client's local mode could not lock its folder: another process holds it (its
    `RuntimeError` is raised while handling portalocker's `LockException`)."""
    import portalocker

    return isinstance(error, RuntimeError) and isinstance(
        error.__context__, portalocker.exceptions.LockException
    )


def is_permission_denied(error: BaseException) -> bool:
    """Qdrant Edge could not open a shard's file: the OS denied access (a plain `Exception`
    whose message carries the OS error, e.g. "Permission denied (os error 13)")."""
    return type(error) is Exception and "(os error 13)" in str(error)


def is_storage_damage(error: BaseException) -> bool:
    """Qdrant Edge could not read its storage (a page that does not decompress, a vector that
    is not readable), not for want of room, files or memory."""
    text = str(error)
    return text.startswith(_EDGE_STORAGE) and not any(n in text for n in _EDGE_NOT_DAMAGE)
