"""The web UI clicked through in a real browser: Debian's Chromium (/usr/bin/chromium), driven
by Playwright. Missing browser: skipped on a desk, a failure under CI.

With SCOPERAG_UI_SCREENSHOTS set to a folder, each page's screenshot is written there (the
ones in docs/ui/ come from this)."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from uvicorn_thread import serving

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES
from scoperag.server.ui.app import ui_app
from scoperag.server.ui.context import UiContext

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = os.environ.get("SCOPERAG_UI_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Chromium with a fresh profile."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: CI installs Debian's chromium (.ci/run)")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=str(CHROMIUM),
            args=FLAGS,
            headless=True,
            viewport={"width": 1100, "height": 760},
        )
        yield context
        context.close()


@pytest.fixture(scope="module")
def store(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[tuple[str, UiContext]]:
    """The UI's URL and context, over a store holding the memory sample."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("store"))
    runtime = Runtime(settings, embedder=embedder)
    app, ctx = ui_app(runtime, "127.0.0.1")
    ctx.call("ingest_memories", {"path": str(SAMPLES / "memories.json")})
    with serving(app) as url:
        yield url, ctx
    ctx.close()
    runtime.close()


class Page:
    """A browser tab that records console errors and uncaught exceptions."""

    def __init__(self, browser: Any, base: str) -> None:
        self.base = base
        self.errors: list[str] = []
        self.tab = browser.new_page()
        self.tab.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.tab.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def open(self, path: str) -> Any:
        response = self.tab.goto(self.base + path)
        assert response is not None and response.status == 200, (path, response)
        return self.tab

    def shot(self, name: str) -> None:
        if SCREENSHOTS:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            path = Path(SCREENSHOTS) / f"{name}.png"
            self.tab.screenshot(path=str(path))
            from PIL import Image  # a few colours keep the committed pictures small

            Image.open(path).convert("RGB").quantize(48).save(path, optimize=True)


@pytest.fixture()
def page(browser: Any, store: tuple[str, UiContext]) -> Iterator[Page]:
    tab = Page(browser, store[0])
    yield tab
    tab.tab.close()
    assert tab.errors == [], "console errors"


def test_the_overview_lists_every_profile_with_its_counts(page: Page, store: tuple) -> None:
    tab = page.open("/ui/")
    rows = tab.locator("#collections tr[data-profile]")
    profiles = [rows.nth(i).get_attribute("data-profile") for i in range(rows.count())]
    assert profiles == [profile.name for profile in store[1].profiles()]
    memory = tab.locator('tr[data-profile="memory"] .points')
    assert memory.inner_text() == "5"
    assert tab.locator('tr[data-profile="pdf"] .points').inner_text() == "0"
    assert "scoperag ingest pdf" in tab.locator("#collections").inner_text()
    assert "no problems found" in tab.locator("#verdict").inner_text()
    assert "memories" in tab.locator("#checks").inner_text()
    page.shot("overview")


def test_browsing_memories_shows_a_table_with_their_groups(page: Page) -> None:
    tab = page.open("/ui/browse/memory")
    assert tab.locator("#points tbody tr").count() == 5
    headers = tab.locator("#points thead").inner_text()
    assert "tags" in headers and "memory_type" in headers
    months = tab.locator("#timeline .month")
    assert months.count() == 13  # this month and the 12 before it
    shown = {
        months.nth(i).locator("small").nth(0).inner_text(): int(
            months.nth(i).locator("small").nth(1).inner_text()
        )
        for i in range(13)
    }
    sample = json.loads((SAMPLES / "memories.json").read_text())["memories"]
    stored = Counter(m["created_at"][2:7] for m in sample if m["created_at"][2:7] in shown)
    assert {month: n for month, n in shown.items() if n} == dict(stored)
    page.shot("browse")
    types = tab.locator(".groups details").filter(has_text="types")
    types.locator("summary").click()
    types.locator(".facets a", has_text="decision").click()
    assert "with types =" in tab.locator("main").inner_text()
    assert 0 < tab.locator("#points tbody tr").count() < 5


def test_a_search_form_is_built_from_the_tools_schema(page: Page, store: tuple) -> None:
    tab = page.open("/ui/search/memory")
    schema = store[1].tools["search"].parameters["properties"]
    for name in schema:
        assert tab.locator(f'#search-form [name="{name}"]').count() == 1, name
    tab.fill('#search-form [name="query"]', "embedded engine")
    tab.fill('#search-form [name="min_similarity"]', "-1")
    tab.click("#search-form button[type=submit]")
    assert re.match(r"[1-9]\d* hit", tab.locator("#hit-count").inner_text())
    page.shot("search")


def test_a_search_with_explain_shows_the_ranks_table(page: Page, store: tuple) -> None:
    tab = page.open("/ui/search/memory")
    tab.fill('#search-form [name="query"]', "embedded engine")
    tab.fill('#search-form [name="min_similarity"]', "-1")
    tab.check('#search-form [name="explain"]')
    tab.click("#search-form button[type=submit]")
    table = tab.locator("#explain-hits")
    assert table.locator("tbody tr").count() >= 1
    assert "fused" in table.inner_text() and "#1" in table.inner_text()
    assert "Filter as applied" in tab.locator("#explain-result").inner_text()
    table.scroll_into_view_if_needed()
    page.shot("explain")


def test_ingesting_a_sample_shows_progress_then_the_document(page: Page) -> None:
    tab = page.open("/ui/ingest?profile=docs")
    tab.click("#use-sample")
    assert tab.input_value('#ingest-form [name="path"]').endswith("docs.jsonl")
    tab.click("#ingest-form button[type=submit]")
    tab.wait_for_selector("#ingest-done", state="visible", timeout=300_000)
    progress = tab.locator("#progress-text").inner_text()
    done, total = re.match(r"(\d+)/(\d+)", progress).groups()
    assert int(total) > 1 and done == total
    page.shot("ingest")
    tab.click("#browse-link")
    assert tab.locator("#points tbody tr").count() > 0
    assert "documents" in tab.locator(".groups").inner_text()


def test_deleting_a_memory_asks_first(page: Page, store: tuple) -> None:
    tab = page.open("/ui/browse/memory")
    before = tab.locator("#points tbody tr").count()
    asked: list[str] = []

    def answer(dialog: Any, accept: bool) -> None:
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    tab.once("dialog", lambda d: answer(d, False))
    tab.locator("#points button.danger").first.click()
    assert asked and "Delete" in asked[0]
    assert tab.locator("#points tbody tr").count() == before  # dismissed: nothing deleted
    tab.once("dialog", lambda d: answer(d, True))
    with tab.expect_navigation():
        tab.locator("#points button.danger").first.click()
    assert len(asked) == 2
    assert tab.locator("#points tbody tr").count() == before - 1


def test_a_cross_origin_post_is_refused(page: Page, store: tuple) -> None:
    """A page of another origin (localhost instead of 127.0.0.1) posts the delete form, with
    the right CSRF token even: 403, nothing deleted."""
    url, ctx = store
    tab = page.open("/ui/browse/memory")
    before = tab.locator("#points tbody tr").count()
    key = tab.locator('#points input[name="content_hash"]').first.input_value()
    other = url.replace("127.0.0.1", "localhost")
    tab.goto(other + "/ui/eval")
    script = """([action, csrf, key]) => {
        const form = document.createElement("form");
        form.method = "post"; form.action = action;
        for (const [name, value] of [["csrf", csrf], ["content_hash", key]]) {
            const input = document.createElement("input");
            input.type = "hidden"; input.name = name; input.value = value;
            form.appendChild(input);
        }
        document.body.appendChild(form); form.submit();
    }"""
    with tab.expect_navigation() as navigation:
        tab.evaluate(script, [url + "/ui/memory/memory/delete", ctx.csrf, key])
    assert navigation.value.status == 403
    tab = page.open("/ui/browse/memory")
    assert tab.locator("#points tbody tr").count() == before
    assert all("403" in error for error in page.errors)  # the browser logs the refusal itself
    page.errors.clear()


def test_editing_a_memory_makes_a_second_version(page: Page, store: tuple) -> None:
    tab = page.open("/ui/browse/memory")
    row = tab.locator("#points tbody tr").first
    old = row.locator('input[name="content_hash"]').first.input_value()
    row.locator("details.edit summary").click()
    row.locator('details.edit [name="content"]').fill("Green tea at four, never coffee.")
    with tab.expect_navigation():
        row.locator("details.edit button[type=submit]").click()
    versions = tab.locator("#versions .version")
    assert [versions.nth(i).inner_text() for i in range(versions.count())] == ["1", "2"]
    page.shot("history")
    tab = page.open("/ui/search/memory?tool=search&query=green+tea+four&min_similarity=-1&run=1")
    assert old not in tab.content()
    assert "Green tea at four" in tab.content()


def test_merging_a_duplicate_group_leaves_one_memory(page: Page, store: tuple) -> None:
    url, ctx = store
    for text in ("The sky is blue today.", "The sky is blue today!"):
        ctx.call("store_memory", {"content": text, "tags": ["sky"]})
    tab = page.open("/ui/memory/memory/duplicates")
    group = tab.locator("form.group").filter(has_text="The sky is blue").first
    page.shot("duplicates")
    tab.once("dialog", lambda dialog: dialog.accept())
    with tab.expect_navigation():
        group.locator("button.merge").click()
    assert tab.locator("form.group").filter(has_text="The sky is blue").count() == 0
    found = ctx.call("search", {"query": "sky blue", "min_similarity": -1, "tags": ["sky"]})
    assert len(found["memories"]) == 1


def test_the_eval_page_runs_a_question_file(page: Page, store: tuple, tmp_path: Path) -> None:
    url, ctx = store
    questions = ctx.uploads / "questions.jsonl"
    questions.parent.mkdir(parents=True, exist_ok=True)
    line = '{"tool": "search", "arguments": {"query": "embedded engine", "min_similarity": -1}, '
    missed = line.replace("embedded engine", "reading positions")
    questions.write_text(
        line
        + '"relevant": [{"memory_type": "decision"}]}\n'
        + missed
        + '"relevant": [{"memory_type": "no-such-type"}]}\n'
    )
    tab = page.open("/ui/eval")
    tab.fill('#eval-form [name="path"]', str(questions))
    with tab.expect_navigation():
        tab.click("#eval-form button[type=submit]")
    report = tab.locator("#eval-report").inner_text()
    assert "search" in report and "overall" in report
    assert "reading positions" in tab.locator("#missed").inner_text()
    why = tab.locator("#why").inner_text()  # the miss explained: no stored memory has that type
    assert "reading positions" in why and "memory_type" in why
    assert "no-such-type" in tab.locator("#not-stored").inner_text()
    page.shot("eval")
    with tab.expect_navigation():
        tab.locator("#missed a").first.click()
    assert tab.input_value('#search-form [name="query"]') == "reading positions"
    assert re.match(r"[1-9]\d* hit", tab.locator("#hit-count").inner_text())
