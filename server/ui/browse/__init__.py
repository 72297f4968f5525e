"""Browse pages: each profile's points as a person thinks of them (memories as cards over a
timeline, PDF pages in order, a book up to the reader's position, D&D entries by document and
kind, docs by scope and status). Each layout is the module named after its profile, with
`page(ctx, profile, collection, query) -> values` (asked only once the collection exists) and
its `TEMPLATE`."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from scoperag.core.errors import ScoperagError
from scoperag.server.profiles.declaration import Profile
from scoperag.server.ui.context import UiContext


def browse(ctx: UiContext, profile: Profile, query: Mapping[str, str]) -> tuple[str, dict]:
    """The template and values of `profile`'s browse page for the page's `query`."""
    try:
        module: Any = importlib.import_module(f"scoperag.server.ui.browse.{profile.name}")
    except ModuleNotFoundError:
        raise ScoperagError(f"The UI has no browse page for the {profile.name} profile.") from None
    collection = profile.collection(ctx.settings)
    exists = ctx.runtime.backend.collection_exists(collection)
    values = module.page(ctx, profile, collection, query) if exists else {}
    return module.TEMPLATE, {"profile": profile, "query": dict(query), "exists": exists, **values}
