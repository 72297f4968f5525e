"""Payload contracts and filter declarations, one module per profile, found rather than listed.

A profile's contract is the module `core/contracts/<name>.py`, or for a profile another package
ships, the module its `scoperag.contracts` entry point names (`<name> = "package.module"`).
Each defines `required_indexes(settings) -> {collection: [fields]}` (`registry`). The names
found are the profiles the settings accept; finding them imports no contract.
"""

from __future__ import annotations

import pkgutil
from functools import cache
from importlib.metadata import entry_points

ENTRY_POINTS = "scoperag.contracts"
NOT_CONTRACTS = frozenset({"registry"})


@cache
def contract_modules() -> dict[str, str]:
    """Profile name -> the module of its contract, for every profile installed, by name."""
    found = {
        info.name: f"{__name__}.{info.name}"
        for info in pkgutil.iter_modules(__path__)
        if not info.ispkg and info.name not in NOT_CONTRACTS
    }
    for point in entry_points(group=ENTRY_POINTS):
        found.setdefault(point.name, point.value)
    return dict(sorted(found.items()))


def profile_names() -> list[str]:
    """Every profile installed (each has a contract), by name."""
    return list(contract_modules())
