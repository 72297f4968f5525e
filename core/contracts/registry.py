"""Every profile's collections and the payload indexes each one requires."""

from __future__ import annotations

import importlib

from scoperag.core.fields import FilterableField
from scoperag.core.settings import Settings

# profile -> contract module defining `required_indexes(settings) -> {collection: [fields]}`
CONTRACT_MODULES = {
    "pdf": "scoperag.core.contracts.pdf",
    "books": "scoperag.core.contracts.books",
    "memory": "scoperag.core.contracts.memory",
    "dnd": "scoperag.core.contracts.dnd",
    "docs": "scoperag.core.contracts.docs",
}


def required_indexes(settings: Settings) -> dict[str, list[FilterableField]]:
    """Collection -> the fields whose payload indexes it needs, over the enabled profiles."""
    plan: dict[str, list[FilterableField]] = {}
    for profile in settings.profiles:
        module = importlib.import_module(CONTRACT_MODULES[profile])
        plan.update(module.required_indexes(settings))
    return plan
