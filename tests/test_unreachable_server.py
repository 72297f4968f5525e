"""A Qdrant server that cannot be reached gives one clear message, on the CLI and over MCP."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner
from fastmcp import Client
from fastmcp.exceptions import ToolError

from scoperag.core.config.settings import Settings
from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime


@pytest.fixture
def closed_url() -> str:
    """A loopback URL on a port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _is_clear(message: str, url: str) -> None:
    assert f"Cannot reach the Qdrant server at {url}" in message
    assert "SCOPERAG_QDRANT_URL" in message and "Traceback" not in message


def test_the_cli_says_which_server_and_what_to_check(
    closed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: an unreachable server surfaced as a ResponseHandlingException traceback."""
    monkeypatch.setenv("SCOPERAG_QDRANT_URL", closed_url)
    result = CliRunner().invoke(cli, ["indexes", "check"])
    assert result.exit_code == 1
    _is_clear(result.output, closed_url)


async def test_an_mcp_tool_says_which_server_and_what_to_check(closed_url: str) -> None:
    runtime = Runtime(Settings(qdrant_url=closed_url, profiles=["pdf"]))
    async with Client(build_server(runtime)) as client:
        with pytest.raises(ToolError) as error:
            await client.call_tool("qdrant-list-documents", {})
    _is_clear(str(error.value), closed_url)
