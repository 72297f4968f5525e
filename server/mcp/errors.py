"""The MCP error boundary: an error meant for people becomes a tool error, its message as it is."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastmcp.exceptions import ToolError

from scoperag.core.errors import ScoperagError


def tool_error(error: ScoperagError) -> ToolError:
    """The tool error a client reads for `error` (FastMCP would prefix any other exception)."""
    return ToolError(str(error))


@contextmanager
def tool_errors() -> Iterator[None]:
    """Run the body; a `ScoperagError` raised in it leaves as its `tool_error`."""
    try:
        yield
    except ScoperagError as error:
        raise tool_error(error) from None
