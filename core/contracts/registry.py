"""Every profile's collections and the payload indexes each one requires.

Profile `x`'s contract is the module `scoperag.core.contracts.x`: it defines
`required_indexes(settings) -> {collection: [fields]}`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from scoperag.core.config.settings import Settings
from scoperag.core.filters.fields import FilterableField


def contract_module(profile: str) -> ModuleType:
    """The payload contract of `profile` (one of `settings.PROFILES`)."""
    return importlib.import_module(f"{__package__}.{profile}")


def required_indexes(settings: Settings) -> dict[str, list[FilterableField]]:
    """Collection -> the fields whose payload indexes it needs, over the enabled profiles."""
    plan: dict[str, list[FilterableField]] = {}
    for profile in settings.profiles:
        plan.update(contract_module(profile).required_indexes(settings))
    return plan
