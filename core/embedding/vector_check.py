"""No vector that is not a vector: finite, of the collection's dimension, and of unit norm where
the embedder normalises. Checked at the embedder's output, before every write and every search.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from scoperag.core.errors import ScoperagError

NORM_TOLERANCE = 1e-3  # |norm - 1| a float32 unit vector stays well within


class InvalidVectorError(ScoperagError):
    """A vector that is not finite, not of the collection's dimension, or not of unit norm."""

    def __init__(self, what: str, position: int, reason: str) -> None:
        self.what, self.position, self.reason = what, position, reason
        super().__init__(
            f"The vector of {what} {position} (its position in the batch, from 0) {reason}: "
            "neither it nor the rest of its batch is written or searched with. Check the "
            "embedding model (SCOPERAG_EMBED_PROVIDER, SCOPERAG_EMBED_MODEL), or the vectors "
            "given directly."
        )


def vector_problem(vector: Any, dimension: int | None, normalised: bool) -> str | None:
    """What is wrong with `vector` (None: nothing)."""
    if not hasattr(vector, "__len__") or isinstance(vector, str | bytes | dict):
        return f"is a {type(vector).__name__}, not a list of numbers"
    if dimension is not None and len(vector) != dimension:
        return f"has {len(vector)} dimensions, the collection's vectors have {dimension}"
    if len(vector) == 0:
        return "is empty"
    try:
        values = np.asarray(vector)
    except (TypeError, ValueError):
        return "holds values that are not numbers"
    if values.ndim != 1 or values.dtype.kind not in "biuf":  # no text, None, lists, objects
        return "holds values that are not numbers"
    values = values.astype(np.float64, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        squares = float(np.dot(values, values))
    if not math.isfinite(squares):
        bad = np.flatnonzero(~np.isfinite(values))
        if not bad.size:
            return "has values too large: its norm is not finite"
        position = int(bad[0])
        return f"is not finite ({vector[position]!r} at index {position})"
    if normalised and abs(math.sqrt(squares) - 1.0) > NORM_TOLERANCE:
        return f"has norm {math.sqrt(squares):.6g}, where the model gives unit vectors"
    return None


def check_vectors(
    vectors: Iterable[Any], dimension: int | None, normalised: bool, what: str = "text"
) -> None:
    """Raise `InvalidVectorError` naming the first vector with a problem, and the problem."""
    for position, vector in enumerate(vectors):
        problem = vector_problem(vector, dimension, normalised)
        if problem is not None:
            raise InvalidVectorError(what, position, problem)


def dense_of(vector: Any, name: str) -> Any:
    """A point's dense vector: the one named `name` of a dict of vectors, else the vector."""
    return vector.get(name) if isinstance(vector, dict) else vector


def check_points(points: Sequence[Any], name: str, dimension: int | None) -> None:
    """Check the dense vector (`name`) of each point (qdrant-client's `PointStruct`) to write."""
    check_vectors((dense_of(point.vector, name) for point in points), dimension, False, "point")
