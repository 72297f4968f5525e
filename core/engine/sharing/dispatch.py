"""`Dispatch`: an open engine's operations run by name, the one place every operation passes,
whether this process asks or another one does through the owner's socket.

The names are the operations `core.engine.operations` declares (the generation registry's as
`generations.<name>`), and nothing else: a name from the wire reaches only those methods.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.generations import Generations
from scoperag.core.engine.operations import EngineOperations, Operation, operations
from scoperag.core.errors import InvalidParameterError, ReadOnlyStoreError

OPERATIONS: dict[str, Operation] = {
    **operations(EngineOperations),
    **{f"generations.{name}": op for name, op in operations(Generations).items()},
}


class Dispatch:
    """The operations of `engine`, by name; a store this process may not write (`writable`
    False) refuses every write. `counts` holds the operations run, by name (`scoperag status`)."""

    def __init__(self, engine: VectorBackend, writable: bool = True) -> None:
        self.engine, self.writable = engine, writable
        self.counts: Counter[str] = Counter()

    def run(self, op: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """Run `op` with these arguments inside `holding` (an iterator's items are read there)."""
        declared = OPERATIONS.get(op)
        if declared is None:
            raise InvalidParameterError("op", op, ", ".join(sorted(OPERATIONS)))
        if declared.writes and not self.writable:
            raise ReadOnlyStoreError(str(getattr(self.engine, "root", "the data dir")))
        registry, _, name = op.rpartition(".")
        method = getattr(self.engine.generations if registry else self.engine, name)
        self.counts[op] += 1
        with self.holding(op, declared):
            result = method(*args, **kwargs)
            return list(result) if isinstance(result, Iterator) else result  # e.g. `points`

    def holding(self, op: str, declared: Operation) -> contextlib.AbstractContextManager[None]:
        """What `op` holds while it runs: nothing here (a store nothing else may change)."""
        return contextlib.nullcontext()

    def stop(self) -> None:
        """Nothing to hand on."""
