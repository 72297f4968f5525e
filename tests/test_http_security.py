"""The HTTP app's access control over real HTTP (uvicorn): token, Host/Origin, body limits.

No store is touched: every request here is refused (or answered) before a search runs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from uvicorn_thread import serving

from scoperag.core.config.settings import Settings
from scoperag.server.cli.main import cli
from scoperag.server.http.app import build_http_app
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.docs.tools import SEARCH_PATH
from scoperag.server.runtime import Runtime

TOKEN = "s3cret-token"
AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`scoperag serve --transport http` with SCOPERAG_HTTP_TOKEN set, on a free local port."""
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("store"), profiles=["docs"], http_token=TOKEN
    )
    runtime = Runtime(settings)
    with serving(build_http_app(runtime, build_server(runtime))) as url:
        yield url
    runtime.close()


@pytest.fixture()
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=60) as client:
        yield client


def test_healthz_is_open_and_everything_else_needs_the_token(http: httpx.Client) -> None:
    """Defect: the HTTP API and /mcp answered anyone; there was no token setting."""
    assert http.get("/healthz").status_code == 200
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": TOKEN}):
        for method, path in (("POST", "/mcp"), ("POST", SEARCH_PATH), ("GET", "/openapi.json")):
            response = http.request(method, path, headers=headers, json={"query": "q"})
            assert response.status_code == 401, (method, path, headers)
            assert "SCOPERAG_HTTP_TOKEN" in response.json()["message"]
            assert response.headers["www-authenticate"] == "Bearer"
    assert http.get("/openapi.json", headers=AUTH).status_code == 200


def test_the_bearer_scheme_is_case_insensitive(http: httpx.Client) -> None:
    """Defect: `Authorization: bearer <token>` was refused (the scheme is case-insensitive)."""
    for scheme in ("bearer", "BEARER", "bEaReR"):
        headers = {"authorization": f"{scheme} {TOKEN}"}
        assert http.get("/openapi.json", headers=headers).status_code == 200, scheme
    for wrong in (f"Basic {TOKEN}", f"Bearer{TOKEN}", f"bearer {TOKEN}x"):
        assert http.get("/openapi.json", headers={"authorization": wrong}).status_code == 401


async def test_an_mcp_client_with_the_token_gets_in(base_url: str) -> None:
    transport = StreamableHttpTransport(f"{base_url}/mcp", headers=AUTH)
    async with Client(transport) as client:
        assert "elf_docs_search_l0" in {tool.name for tool in await client.list_tools()}


def test_foreign_host_and_origin_are_refused(http: httpx.Client, base_url: str) -> None:
    """Defect: no Host/Origin check, so a DNS-rebinding page could drive a local server."""
    foreign_host = http.post(SEARCH_PATH, headers={**AUTH, "host": "evil.example"}, json={})
    assert foreign_host.status_code == 403
    assert "evil.example" in foreign_host.json()["message"]
    foreign_origin = {**AUTH, "origin": "http://evil.example"}
    assert http.post("/mcp", headers=foreign_origin, json={}).status_code == 403
    assert http.post(SEARCH_PATH, headers=foreign_origin, json={}).status_code == 403
    same_origin = {**AUTH, "origin": base_url, "host": base_url.removeprefix("http://")}
    assert http.post(SEARCH_PATH, headers=same_origin, json={}).status_code == 400


def test_a_60_mb_body_is_refused_quickly(http: httpx.Client) -> None:
    """Defect: a 60 MB body took 100 s and 12.7 GB of RSS while every other call waited."""
    body = b"x" * (60 * 1024 * 1024)
    started = time.monotonic()
    response = http.post(
        SEARCH_PATH, headers={**AUTH, "content-type": "application/json"}, content=body
    )
    assert response.status_code == 413
    print(f"60 MB body refused in {time.monotonic() - started:.2f} s")


def test_a_streamed_body_is_cut_at_the_limit(http: httpx.Client) -> None:
    """Without Content-Length the body is read only up to the limit (4 MiB), then refused."""
    sent = 0

    def chunks() -> Iterator[bytes]:
        nonlocal sent
        for _ in range(60):
            sent += 1024 * 1024
            yield b" " * (1024 * 1024)

    headers = {**AUTH, "content-type": "application/json"}
    try:
        response = http.post(SEARCH_PATH, headers=headers, content=chunks())
    except httpx.TransportError:  # the server may close the connection mid-upload
        assert sent < 60 * 1024 * 1024
    else:
        assert response.status_code == 413


@pytest.mark.parametrize(
    ("content", "content_type", "status", "field", "words"),
    [
        (b'{"query": "q"}', "text/plain", 415, "content-type", "application/json"),
        (b'{"query": "q"}', None, 415, "content-type", "application/json"),
        (b'{"query": "\xff\xfe"}', "application/json", 400, "body", "UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "application/json", 400, "body", "nested"),
        (b'{"query": "q", "scpe": "org_shared"}', "application/json", 400, "scpe", "'scope'"),
        (b'{"query": "\\ud800"}', "application/json", 400, "query", "nicode"),
        (b'{"query": "a\\u0000b"}', "application/json", 400, "query", "NUL"),
        (b'{"query": "q", "top_k": 1e400}', "application/json", 400, "top_k", "top_k"),
    ],
)
def test_bad_bodies_get_4xx_naming_what_is_wrong(
    http: httpx.Client,
    content: bytes,
    content_type: str | None,
    status: int,
    field: str,
    words: str,
) -> None:
    """Defect: deeply nested JSON answered 500; a body with "scpe" ran unfiltered."""
    headers = {**AUTH, **({"content-type": content_type} if content_type else {})}
    response = http.post(SEARCH_PATH, headers=headers, content=content)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["field"] == field
    assert words in body["message"]
    assert len(response.content) < 2_000  # a refused body is never echoed whole


def test_serve_refuses_a_public_address_without_a_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: `serve --transport http --host 0.0.0.0` exposed every tool to the network."""
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(cli, ["serve", "--transport", "http", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "SCOPERAG_HTTP_TOKEN" in result.output
