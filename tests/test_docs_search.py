"""`POST /v2/docs/search/l0` over real HTTP (uvicorn) and `elf_docs_search_l0` over MCP.

The corpus is the evals fixture generator's output plus a few documents placed on exact instants;
expected results are computed from the JSONL records themselves, independently of the store.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import Client
from uvicorn_thread import serving

from scoperag.pipelines.docs import ingest_docs_jsonl
from scoperag.server.http.app import build_http_app
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.docs.tools import SEARCH_PATH
from scoperag.server.runtime import Runtime

GENERATOR = Path(__file__).resolve().parents[1] / "evals" / "make_docs_fixture.py"
TOP = 100  # every test query returns fewer hits than this, so all matches are seen
CLOCK = {  # doc_id -> updated_at: the same instant in two zones, and one millisecond either side
    "clock-z": "2025-06-01T12:00:00Z",
    "clock-plus2": "2025-06-01T14:00:00+02:00",
    "clock-later": "2025-06-01T07:00:00.001-05:00",
    "clock-earlier": "2025-06-01T11:59:59.999Z",
}
PARAMETERS = [
    "query",
    "top_k",
    "explain",
    "scope",
    "status",
    "doc_type",
    "agent_id",
    "updated_after",
    "updated_before",
]
Search = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class Refused(Exception):
    """A search the interface refused: the message, and the HTTP body where there is one."""

    def __init__(self, message: str, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.body = body


def generate_fixture(path: Path, count: int, seed: int) -> Path:
    """Run the evals fixture generator as a user would."""
    command = [sys.executable, str(GENERATOR), "--count", str(count), "--seed", str(seed)]
    subprocess.run([*command, "--out", str(path)], check=True, capture_output=True)
    return path


def _clock_docs() -> list[dict[str, str]]:
    return [
        {
            "doc_id": doc_id,
            "title": "Clock probe",
            "text": f"Boundary probe document {doc_id} for the exclusive date filters.",
            "scope": "org_shared",
            "status": "active",
            "doc_type": "clock_probe",
            "agent_id": "agent-clock",
            "updated_at": updated_at,
        }
        for doc_id, updated_at in CLOCK.items()
    ]


@pytest.fixture(scope="module")
def corpus(
    make_runtime: Callable[..., Runtime], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Runtime, list[dict[str, str]]]:
    path = generate_fixture(tmp_path_factory.mktemp("docs") / "docs.jsonl", 40, 3)
    with path.open("a") as out:
        out.writelines(json.dumps(doc) + "\n" for doc in _clock_docs())
    records = [json.loads(line) for line in path.read_text().splitlines()]
    runtime = make_runtime(profiles=["pdf", "docs"])
    report = ingest_docs_jsonl(path, runtime.backend, runtime.embedder)
    assert report.documents == len(records) and not report.skipped
    return runtime, records


@pytest.fixture(scope="module")
def base_url(corpus: tuple[Runtime, list]) -> Iterator[str]:
    """The app of `scoperag serve --transport http`, served by uvicorn on a free local port."""
    runtime, _ = corpus
    with serving(build_http_app(runtime, build_server(runtime))) as url:
        yield url


@pytest.fixture(scope="module")
async def http(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
async def mcp(corpus: tuple[Runtime, list]) -> AsyncIterator[Client]:
    async with Client(build_server(corpus[0])) as client:
        yield client


async def _via_http(http: httpx.AsyncClient, arguments: dict[str, Any]) -> dict[str, Any]:
    response = await http.post(SEARCH_PATH, json=arguments)
    if response.status_code == 400:
        raise Refused(response.json()["message"], response.json())
    assert response.status_code == 200, response.text
    return response.json()


async def _via_mcp(mcp: Client, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await mcp.call_tool("elf_docs_search_l0", arguments, raise_on_error=False)
    if result.is_error:
        raise Refused(result.content[0].text)
    return result.structured_content


@pytest.fixture(params=["http", "mcp"])
def search(request: pytest.FixtureRequest, http: httpx.AsyncClient, mcp: Client) -> Search:
    if request.param == "http":
        return lambda arguments: _via_http(http, arguments)
    return lambda arguments: _via_mcp(mcp, arguments)


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


def expected(records: list[dict[str, str]], **filters: str) -> set[str]:
    """doc_ids the contract selects, computed from the records (the test's own oracle)."""
    filters.setdefault("status", "active")
    after = filters.pop("updated_after", None)
    before = filters.pop("updated_before", None)
    return {
        record["doc_id"]
        for record in records
        if all(record[key] == value for key, value in filters.items())
        and (after is None or _instant(record["updated_at"]) > _instant(after))
        and (before is None or _instant(record["updated_at"]) < _instant(before))
    }


async def _found(search: Search, **arguments: Any) -> set[str]:
    result = await search({"query": "what failed and how was it fixed", "top_k": TOP, **arguments})
    assert len(result["hits"]) < TOP
    return {hit["doc_id"] for hit in result["hits"]}


async def test_status_defaults_to_active(search: Search, corpus: tuple[Runtime, list]) -> None:
    records = corpus[1]
    result = await search({"query": "deployment", "top_k": TOP})
    assert result["filters"]["status"] == "active"
    assert {hit["doc_id"] for hit in result["hits"]} == expected(records)
    assert {hit["status"] for hit in result["hits"]} == {"active"}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("scope", "agent_private"),
        ("scope", "project_shared"),
        ("scope", "org_shared"),
        ("status", "draft"),
        ("status", "archived"),
        ("doc_type", "runbook"),
        ("agent_id", "agent-gale"),
        ("updated_after", "2025-11-01T00:00:00Z"),
        ("updated_before", "2025-06-01T00:00:00+02:00"),
    ],
)
async def test_each_filter_alone(
    search: Search, corpus: tuple[Runtime, list], name: str, value: str
) -> None:
    want = expected(corpus[1], **{name: value})
    assert want, f"the fixture has no document for {name}={value}; pick another value"
    assert await _found(search, **{name: value}) == want


async def test_all_filters_combine_with_and(search: Search, corpus: tuple[Runtime, list]) -> None:
    records = corpus[1]
    target = next(r for r in records if r["status"] == "active" and r["agent_id"] != "agent-clock")
    filters = {
        "scope": target["scope"],
        "doc_type": target["doc_type"],
        "agent_id": target["agent_id"],
        "updated_after": "2024-11-01T00:00:00Z",
        "updated_before": "2026-11-01T00:00:00Z",
    }
    want = expected(records, **filters)
    assert target["doc_id"] in want
    assert await _found(search, **filters) == want
    assert await _found(search, **filters, status="superseded") == expected(
        records, **filters, status="superseded"
    )


@pytest.mark.parametrize(
    ("bounds", "want"),
    [
        ({"updated_after": "2025-06-01T12:00:00Z"}, {"clock-later"}),
        ({"updated_after": "2025-06-01T14:00:00+02:00"}, {"clock-later"}),
        ({"updated_before": "2025-06-01T12:00:00Z"}, {"clock-earlier"}),
        ({"updated_before": "2025-06-01T07:00:00-05:00"}, {"clock-earlier"}),
        (
            {
                "updated_after": "2025-06-01T13:59:59.999+02:00",
                "updated_before": "2025-06-01T12:00:00.001Z",
            },
            {"clock-z", "clock-plus2"},
        ),
        (
            {"updated_after": "2025-06-01T11:59:59.999Z", "updated_before": "2025-06-01T12:00:00Z"},
            set(),
        ),
    ],
)
async def test_exclusive_bounds_at_the_exact_instant(
    search: Search, bounds: dict[str, str], want: set[str]
) -> None:
    assert await _found(search, agent_id="agent-clock", **bounds) == want


async def test_mixed_time_zones_name_the_same_instant(
    search: Search, corpus: tuple[Runtime, list]
) -> None:
    same_instant = [
        "2025-09-15T06:00:00Z",
        "2025-09-15T08:00:00+02:00",
        "2025-09-14T22:00:00-08:00",
    ]
    want = expected(corpus[1], updated_after=same_instant[0])
    assert want and want != expected(corpus[1])
    for text in same_instant:
        assert await _found(search, updated_after=text) == want


@pytest.mark.parametrize(
    ("name", "value"), [("doc_type", "runbooks"), ("agent_id", "agent-nobody"), ("status", "bogus")]
)
async def test_a_value_no_document_has_is_named_with_the_stored_ones(
    search: Search, corpus: tuple[Runtime, list], name: str, value: str
) -> None:
    result = await search({"query": "deployment", name: value})
    assert result["hits"] == []
    stored = sorted({record[name] for record in corpus[1]})[0]
    assert f"Unknown value \"{value}\" in '{name}'; stored: {stored}" in result["message"]


@pytest.mark.parametrize(
    "query", ["what failed and how was it fixed", "deployment", "kafka consumer lag runbook"]
)
async def test_hits_come_in_the_order_of_their_scores_with_the_cosine_beside(
    search: Search, query: str
) -> None:
    hits = (await search({"query": query, "top_k": TOP}))["hits"]
    assert len(hits) > 5
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= hit["similarity"] <= 1.0 for hit in hits)


async def test_hits_carry_text_score_and_the_contract_fields(
    search: Search, corpus: tuple[Runtime, list]
) -> None:
    by_id = {record["doc_id"]: record for record in corpus[1]}
    result = await search({"query": "Boundary probe for date filters", "top_k": 3})
    hits = result["hits"]
    assert len(hits) == 3 and hits[0]["doc_id"].startswith("clock-")
    assert [hit["score"] for hit in hits] == sorted((hit["score"] for hit in hits), reverse=True)
    for hit in hits:
        record = by_id[hit["doc_id"]]
        assert hit["text"] and hit["chunk_index"] >= 0
        for key in ("scope", "status", "doc_type", "agent_id", "updated_at", "title"):
            assert hit[key] == record[key]


INVALID = [
    ({"scope": "team"}, "scope", "team", "one of agent_private, project_shared, org_shared"),
    ({"updated_after": "2025-06-01"}, "updated_after", "2025-06-01", "RFC3339"),
    ({"updated_before": "June 1st"}, "updated_before", "June 1st", "RFC3339"),
    ({"updated_after": "2025-06-01T12:00:00"}, "updated_after", "2025-06-01T12:00:00", "time zone"),
    (
        {"updated_after": "2025-06-01T12:00:00Z", "updated_before": "2025-06-01T14:00:00+02:00"},
        "updated_after",
        "2025-06-01T12:00:00Z",
        "exclusive",
    ),
    (
        {"updated_after": "2026-01-01T00:00:00Z", "updated_before": "2025-01-01T00:00:00Z"},
        "updated_after",
        "2026-01-01T00:00:00Z",
        "earlier than updated_before",
    ),
    ({"updated_after": 1748779200}, "updated_after", 1748779200, "valid string"),
    ({"status": ""}, "status", "", "non-empty"),
    ({"top_k": 0}, "top_k", 0, "greater than or equal to 1"),
    ({"query": None}, "query", None, "valid string"),
]


@pytest.mark.parametrize(("arguments", "field", "value", "rule"), INVALID)
async def test_invalid_values_are_refused_alike(
    http: httpx.AsyncClient, mcp: Client, arguments: dict, field: str, value: Any, rule: str
) -> None:
    call = {"query": "runbook", **arguments}
    with pytest.raises(Refused) as over_http:
        await _via_http(http, call)
    body = over_http.value.body
    assert body["contract"] == "docs_search_filters/v1"
    assert (body["field"], body["value"]) == (field, value)
    assert rule in body["rule"]
    assert field in body["message"] and json.dumps(value) in body["message"]
    with pytest.raises(Refused) as over_mcp:
        await _via_mcp(mcp, call)
    assert over_mcp.value.message == body["message"]


async def test_missing_query_and_non_object_bodies_get_400(http: httpx.AsyncClient) -> None:
    response = await http.post(SEARCH_PATH, json={"scope": "org_shared"})
    assert response.status_code == 400
    assert (response.json()["field"], response.json()["value"]) == ("query", None)
    for raw in ("not json", "[1, 2]"):
        response = await http.post(
            SEARCH_PATH, content=raw, headers={"content-type": "application/json"}
        )
        assert response.status_code == 400
        assert (response.json()["field"], response.json()["value"]) == ("body", raw)


async def test_openapi_health_readiness_and_mcp_share_one_port(
    http: httpx.AsyncClient, base_url: str
) -> None:
    openapi = (await http.get("/openapi.json")).json()
    operation = openapi["paths"][SEARCH_PATH]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert list(schema["properties"]) == PARAMETERS
    assert {"200", "400", "503"} <= set(operation["responses"])
    assert "/readyz" in openapi["paths"] and "/healthz" in openapi["paths"]
    assert (await http.get("/healthz")).json() == {"status": "ok"}
    ready = await http.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    assert {c["collection"] for c in ready.json()["collections"]} == {"pdf_pages", "docs"}
    over_http = await _via_http(http, {"query": "Boundary probe", "agent_id": "agent-clock"})
    async with Client(f"{base_url}/mcp") as remote:
        tool = next(t for t in await remote.list_tools() if t.name == "elf_docs_search_l0")
        assert list(tool.inputSchema["properties"]) == PARAMETERS
        assert tool.inputSchema["required"] == ["query"]
        assert tool.annotations.readOnlyHint is True
        result = await remote.call_tool(
            "elf_docs_search_l0", {"query": "Boundary probe", "agent_id": "agent-clock"}
        )
    over_mcp = result.structured_content["hits"]
    assert [(h["doc_id"], h["text"]) for h in over_mcp] == [
        (h["doc_id"], h["text"]) for h in over_http["hits"]
    ]
    assert [h["score"] for h in over_mcp] == pytest.approx([h["score"] for h in over_http["hits"]])


def test_fixture_generator_is_deterministic_and_varied(tmp_path: Path) -> None:
    first = generate_fixture(tmp_path / "a.jsonl", 300, 11).read_text()
    assert generate_fixture(tmp_path / "b.jsonl", 300, 11).read_text() == first
    assert generate_fixture(tmp_path / "c.jsonl", 300, 12).read_text() != first
    records = [json.loads(line) for line in first.splitlines()]
    assert len({record["doc_id"] for record in records}) == 300
    for key, at_least in (("scope", 3), ("status", 4), ("doc_type", 7), ("agent_id", 8)):
        assert len({record[key] for record in records}) == at_least
    instants = sorted(datetime.fromisoformat(record["updated_at"]) for record in records)
    assert (instants[-1] - instants[0]).days > 600
    zones = {record["updated_at"][19:].lstrip(".0123456789") for record in records}
    assert {"Z", "+02:00", "-05:00", "+05:30"} <= zones
