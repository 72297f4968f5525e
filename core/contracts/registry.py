"""Every enabled profile's collections and the payload indexes each one requires."""

from __future__ import annotations

import importlib
from types import ModuleType

from scoperag.core.config.settings import Settings
from scoperag.core.contracts import contract_modules
from scoperag.core.errors import InvalidParameterError
from scoperag.core.filters.fields import FilterableField


def contract_module(profile: str) -> ModuleType:
    """The payload contract of `profile` (one of `profile_names()`)."""
    modules = contract_modules()
    if profile not in modules:
        raise InvalidParameterError("profile", profile, ", ".join(modules))
    return importlib.import_module(modules[profile])


def required_indexes(settings: Settings) -> dict[str, list[FilterableField]]:
    """Collection -> the fields whose payload indexes it needs, over the enabled profiles."""
    plan: dict[str, list[FilterableField]] = {}
    for profile in settings.profiles:
        plan.update(contract_module(profile).required_indexes(settings))
    return plan
