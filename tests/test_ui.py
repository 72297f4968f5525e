"""The web UI over real HTTP (uvicorn) without a browser: who may change the store, the token,
the allowed folders, `/ui` beside MCP, forms from input schemas; and ingestion progress that
counts pages and chunks (here, in the CLI's bar and in the Python API's)."""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from uvicorn_thread import serving

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.errors import InvalidParameterError
from scoperag.server.cli.main import cli
from scoperag.server.http.app import build_http_app
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES
from scoperag.server.tool_session import ProgressBar, whole
from scoperag.server.ui.app import ui_app
from scoperag.server.ui.forms import form_arguments, form_fields

TOKEN = "ui-s3cret"


def _csrf(page: str) -> str:
    return re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)


def _wait(http: httpx.Client, job: int) -> dict:
    for _ in range(1200):
        state = http.get(f"/ui/jobs/{job}").json()
        if state["state"] != "running":
            return state
        time.sleep(0.1)
    raise AssertionError(f"job {job} still running: {state}")


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[str]:
    """`scoperag ui`'s app on a free port, over a store holding the memory sample."""
    allowed = tmp_path_factory.mktemp("allowed")
    settings = Settings(data_dir=tmp_path_factory.mktemp("store"), allowed_dirs=[allowed])
    runtime = Runtime(settings, embedder=embedder)
    app, ctx = ui_app(runtime, "127.0.0.1")
    ctx.call("ingest_memories", {"path": str(SAMPLES / "memories.json")})
    with serving(app) as url:
        yield url
    ctx.close()
    runtime.close()


@pytest.fixture()
def http(ui: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=ui, timeout=120) as client:
        yield client


def _memories(http: httpx.Client) -> int:
    page = http.get("/ui/")
    assert page.status_code == 200
    row = re.search(r'data-profile="memory">.*?class="points">(\d+)<', page.text, re.S)
    return int(row.group(1))


def test_a_change_needs_the_ui_origin_and_its_csrf_token(http: httpx.Client, ui: str) -> None:
    """Cross-site requests (another origin, even a loopback one; no Origin; no or a wrong CSRF
    token) are refused with 403 and change nothing; the page's own request goes through."""
    assert _memories(http) == 5
    csrf = _csrf(http.get("/ui/browse/memory").text)
    one = re.search(
        r'name="content_hash" value="([0-9a-f]{64})"', http.get("/ui/browse/memory").text
    )
    form = {"csrf": csrf, "content_hash": one.group(1), "confirmed": "yes"}
    port = ui.rsplit(":", 1)[1]
    refused = [
        ({"origin": "http://evil.example"}, form),
        ({"origin": f"http://localhost:{port}"}, form),  # loopback, but not the UI's origin
        ({}, form),
        ({"origin": ui}, {**form, "csrf": "wrong"}),
        ({"origin": ui}, {"content_hash": form["content_hash"]}),
    ]
    for headers, data in refused:
        response = http.post("/ui/memory/memory/delete", headers=headers, data=data)
        assert response.status_code == 403, (headers, data)
    assert _memories(http) == 5
    unconfirmed = {k: v for k, v in form.items() if k != "confirmed"}  # the page's own form
    response = http.post("/ui/memory/memory/delete", headers={"origin": ui}, data=unconfirmed)
    assert response.status_code == 400 and "confirmation in the page" in response.text
    assert _memories(http) == 5
    done = http.post("/ui/memory/memory/delete", headers={"origin": ui}, data=form)
    assert done.status_code == 303 and done.headers["location"].endswith("/browse/memory")
    assert _memories(http) == 4


def test_ingestion_reads_only_below_the_allowed_folders(http: httpx.Client, ui: str) -> None:
    csrf = _csrf(http.get("/ui/ingest?profile=docs").text)
    sent = http.post(
        "/ui/ingest/docs", headers={"origin": ui}, data={"csrf": csrf, "path": "/etc/passwd"}
    )
    assert sent.status_code == 200
    state = _wait(http, sent.json()["job"]["id"])
    assert state["state"] == "failed" and "/etc/passwd" in state["error"]
    assert "paths below" in state["error"]
    evaluated = http.post(
        "/ui/eval", headers={"origin": ui}, data={"csrf": csrf, "path": "/etc/hostname"}
    )
    assert evaluated.status_code == 400 and "paths below" in evaluated.text


def test_an_upload_is_ingested_from_the_upload_folder(http: httpx.Client, ui: str) -> None:
    csrf = _csrf(http.get("/ui/ingest?profile=docs").text)
    headers = {"origin": ui, "x-csrf-token": csrf, "accept": "application/json"}
    bad = http.post("/ui/upload", params={"name": "../escape.jsonl"}, headers=headers)
    assert bad.status_code == 400 and "a plain file name" in bad.json()["error"]
    body = (SAMPLES / "docs.jsonl").read_bytes()
    sent = http.post("/ui/upload", params={"name": "mine.jsonl"}, headers=headers, content=body)
    assert sent.status_code == 200, sent.text
    path = Path(sent.json()["path"])
    assert path.name == "mine.jsonl" and path.read_bytes() == body
    started = http.post(
        "/ui/ingest/docs", headers={"origin": ui}, data={"csrf": csrf, "path": path}
    )
    state = _wait(http, started.json()["job"]["id"])
    assert state["state"] == "done", state
    assert state["total"] and state["done"] == state["total"]
    first = json.loads(body.splitlines()[0])
    scope = {"scope": first["scope"], "status": first["status"]}
    browsed = html.unescape(http.get("/ui/browse/docs", params=scope).text)
    assert first["title"] in browsed, browsed[:500]


def test_a_token_guards_every_page_and_a_login_link_sets_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    runtime = Runtime(Settings(data_dir=tmp_path / "d", http_token=TOKEN), embedder=embedder)
    app, ctx = ui_app(runtime, "127.0.0.1")
    try:
        with serving(app) as url, httpx.Client(base_url=url, timeout=60) as http:
            assert http.get("/ui/").status_code == 401
            assert http.get("/ui/login", params={"token": "wrong"}).status_code == 401
            login = http.get("/ui/login", params={"token": TOKEN})
            assert login.status_code == 303 and "scoperag_token" in http.cookies
            page = http.get("/ui/")
            assert page.status_code == 200 and 'data-profile="memory"' in page.text
    finally:
        ctx.close()
        runtime.close()


def test_serve_over_http_serves_the_ui_at_ui(tmp_path: Path, embedder: Embedder) -> None:
    runtime = Runtime(Settings(data_dir=tmp_path / "d"), embedder=embedder)
    try:
        app = build_http_app(runtime, build_server(runtime))
        with serving(app) as url, httpx.Client(base_url=url, timeout=60) as http:
            page = http.get("/ui/")
            assert page.status_code == 200
            for profile in runtime.settings.profiles:
                assert f'data-profile="{profile}"' in page.text
            assert "scoperag ingest pdf" in page.text  # an empty profile's sample command
            assert http.get("/ui", follow_redirects=True).status_code == 200  # to /ui/
    finally:
        runtime.close()


def test_the_check_is_asked_for_apart(http: httpx.Client) -> None:
    """The check's verdict comes from its own request, not with the overview."""
    assert "no problems found" not in http.get("/ui/").text
    health = http.get("/ui/health")
    assert health.status_code == 200 and "no problems found" in health.text
    assert "memories" in health.text  # the collection's row


def test_every_answer_refuses_framing_and_foreign_scripts(http: httpx.Client) -> None:
    for path in ("/ui/", "/ui/browse/memory", "/ui/search/pdf", "/ui/static/ui.js", "/ui/nothing"):
        headers = http.get(path).headers
        assert headers["x-frame-options"] == "DENY", path
        policy = headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy, path
        assert "unsafe-inline" not in policy


def test_every_refusal_has_one_shape(http: httpx.Client, ui: str) -> None:
    """A tool's refusal, a guard's 403, an unknown job and a malformed query parameter: the
    same message as `{"error": ...}` to a script, and on the refusal page to a browser."""
    csrf = _csrf(http.get("/ui/").text)
    asked = [
        ("get", "/ui/browse/nothing", {}),  # an unknown profile: the tool layer's error
        ("get", "/ui/jobs/999", {}),
        ("get", "/ui/browse/memory?page=two", {}),
        ("post", "/ui/memory/memory/delete", {"data": {"csrf": "wrong"}}),
        ("get", "/ui/jobs/one", {}),  # not a whole number: FastAPI's own validation
        ("post", "/ui/ingest/nothing", {"data": {"csrf": csrf}}),
    ]
    for method, path, extra in asked:
        script = http.request(
            method, path, headers={"accept": "application/json", "origin": ui}, **extra
        )
        assert script.status_code in (400, 403, 404), (path, script.status_code)
        body = script.json()
        assert list(body) == ["error"] and body["error"], path
        browser = http.request(method, path, headers={"accept": "text/html", "origin": ui}, **extra)
        assert browser.status_code == script.status_code
        assert 'id="error"' in browser.text and body["error"] in html.unescape(browser.text), path


def test_browse_compares_a_facet_with_its_stored_type(http: httpx.Client) -> None:
    """Numeric-looking keyword values ("2024", "007") match as the strings they are; a value
    an integer index cannot hold ("²", a digit to Python) is refused, never an HTTP 500."""
    from scoperag.server.ui.browse.common import typed_value

    class Indexes:
        def payload_indexes(self, collection: str) -> dict[str, str]:
            return {"tags": "keyword", "chapter": "integer", "rating": "float"}

    assert typed_value(Indexes(), "c", "tags", "007") == "007"
    assert typed_value(Indexes(), "c", "chapter", "007") == 7
    assert typed_value(Indexes(), "c", "rating", "0.5") == 0.5
    with pytest.raises(InvalidParameterError, match="chapter"):
        typed_value(Indexes(), "c", "chapter", "²")
    for tag in ("2024", "007", "²"):
        page = http.get("/ui/browse/memory", params={"tags": tag})
        assert page.status_code == 200, (tag, page.text[:300])


def test_the_ui_command_refuses_a_public_address_without_a_token() -> None:
    result = CliRunner().invoke(cli, ["ui", "--host", "0.0.0.0", "--no-browser"])
    assert result.exit_code == 2 and "SCOPERAG_HTTP_TOKEN" in result.output
    assert "--no-browser" in CliRunner().invoke(cli, ["ui", "--help"]).output


def test_a_form_is_its_tools_input_schema(tmp_path: Path) -> None:
    import scoperag

    with scoperag.Store(tmp_path / "d", progress=False) as store:
        schema = store._session.tools["search"].parameters
    fields = form_fields(schema)
    assert {f.name for f in fields} == set(schema["properties"])
    kinds = {f.name: f.kind for f in fields}
    assert kinds["mode"] == "select" and kinds["page_size"] == "integer"
    given = {"query": "tea", "page_size": "3", "mode": "tag", "start_date": ""}
    assert form_arguments(schema, given) == {"query": "tea", "page_size": 3, "mode": "tag"}
    with pytest.raises(InvalidParameterError, match="page_size"):
        form_arguments(schema, {"page_size": "three"})


def test_pdf_progress_counts_pages_and_chunks(embedder: Embedder, tmp_path: Path) -> None:
    """Defect: a 30-page PDF showed `0/1` for its whole run."""
    from scoperag.core.engine.collections import open_backend
    from scoperag.pipelines.pdf import ingest_pdfs

    seen: list[tuple[int, int, str]] = []
    backend = open_backend(Settings(data_dir=tmp_path / "d"))
    try:
        path = SAMPLES / "qpdf-page-labels-num-tree.pdf"
        (report,) = ingest_pdfs([path], backend, embedder, "pdf_pages", progress=_record(seen))
    finally:
        backend.close()
    assert report.pages == 30 and seen
    assert seen[-1][:2] == (30, 30)
    assert [done for done, _, _ in seen] == sorted(done for done, _, _ in seen)
    embedding = [s for s in seen if "chunks embedded" in s[2]]
    assert len(embedding) >= 2 and {total for _, total, _ in embedding} == {30}
    assert 0 < embedding[0][0] < 30


def test_dnd_progress_names_the_entries_embedded(embedder: Embedder, tmp_path: Path) -> None:
    from scoperag.core.engine.collections import open_backend
    from scoperag.pipelines.dnd import ingest_folders

    seen: list[tuple[int, int, str]] = []
    backend = open_backend(Settings(data_dir=tmp_path / "d"))
    try:
        reports = ingest_folders([SAMPLES / "dnd"], backend, embedder, _record(seen))
    finally:
        backend.close()
    assert reports and seen
    total = seen[-1][1]
    assert seen[-1][:2] == (total, total) and {t for _, t, _ in seen} == {total}
    assert any(re.search(r": \d+/\d+ entries embedded$", note) for _, _, note in seen)


def _record(seen: list[tuple[int, int, str]]):
    return lambda done, total, note: seen.append((done, total, note))


async def test_the_python_bar_shows_whole_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    """Defect: totals showed as `0/2.0`."""
    assert whole(2.0) == 2 and isinstance(whole(2.0), int) and whole(None) is None
    assert whole(1.5) == 1.5
    bar = ProgressBar("ingest")
    await bar(1.0, 117.0, "page 1")
    bar.close()
    shown = capsys.readouterr().err  # what the bar drew on the terminal
    assert "ingest" in shown and "1/117" in shown and "1.0/117.0" not in shown


def test_the_cli_bar_grows_its_total_with_the_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PDF's pages become the total once it is read; each line shows count and note together."""
    import io

    from scoperag.server.cli.support import progress_bar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    update = progress_bar("pdf", unit="page")
    update(0, 1, "a.pdf: reading")
    update(4, 43, "a.pdf: 16/140 chunks embedded")
    update(43, 43, "done")
    lines = terminal.getvalue().replace("\r", "\n").splitlines()
    assert any("4/43" in line and "16/140 chunks" in line for line in lines)
    assert not any("0/1" in line and "chunks" in line for line in lines)
    assert "43/43" in terminal.getvalue()
