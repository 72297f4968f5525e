"""No vector that is not a vector: finite, of the collection's dimension, and of unit norm where
the embedder normalises. Checked at the embedder's output, before every write and every search.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

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
    if not vector:
        return "is empty"
    try:
        squares = math.fsum(value * value for value in vector)
    except TypeError:
        return "holds values that are not numbers"
    if not math.isfinite(squares):
        position = next(i for i, value in enumerate(vector) if not math.isfinite(value))
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
