"""Handlers named `module:Class`, built on their first call (`deferred_service`).

The modules named are remembered (`HANDLER_MODULES`) so the warm-up (`server/mcp/warm_up.py`) can
import them early; its imports and a first call's take `IMPORTING`, one after the other.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Any

IMPORTING = threading.RLock()  # the warm-up's imports and a first call's, one after the other
HANDLER_MODULES: dict[str, None] = {}  # every deferred handler's module, in declaration order


def deferred_service(path: str, *args: Any) -> Callable[[], Any]:
    """`module:Class(*args)`, built once, on the first call (or imported by the warm-up).

    Call it only in a worker thread (every tool's handler runs in one; an HTTP route wraps the
    call: `to_thread.run_sync(lambda: service().method(...))`): the first call may wait seconds
    for imports, which on the event loop would stall every session and /healthz."""
    module, _, name = path.partition(":")
    HANDLER_MODULES[module] = None
    built: list[Any] = []

    def service() -> Any:
        if not built:
            with IMPORTING:
                if not built:
                    built.append(getattr(importlib.import_module(module), name)(*args))
        return built[0]

    return service
