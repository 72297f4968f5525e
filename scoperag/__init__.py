"""scoperag: metadata-scoped retrieval over Qdrant with LlamaIndex, served as MCP tools.

The one import package. Its parts live in the repository's top-level folders (`core/`,
`pipelines/`, `retrievers/`, `postprocessors/`, `server/`); `pyproject.toml` maps each of them to
`scoperag.<part>`, so an install holds `scoperag` alone at the top of site-packages.

The public Python API (docs/python.md) is `__all__`, imported on first use so that
`import scoperag` stays fast.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EvalReport", "Store", "ToolCallError", "open", "sample"]

# public name -> the module that defines it
_PUBLIC = {
    "Store": "scoperag.store",
    "open": "scoperag.store",
    "sample": "scoperag.store",
    "ToolCallError": "scoperag.server.tool_session",
    "EvalReport": "scoperag.server.evaluation",
}


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'scoperag' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_PUBLIC[name]), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
