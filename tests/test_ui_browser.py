"""The web UI clicked through in a real browser: Debian's Chromium (/usr/bin/chromium), driven
by Playwright, at 1400 px, with axe-core (installed from npm by `.ci/run` into .ci/node)
checking every page. A missing browser or axe-core: skipped on a desk, a failure under CI."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
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
from scoperag.server.ui.upkeep import MERGE_AT_MOST

CHROMIUM = Path("/usr/bin/chromium")
AXE = Path(__file__).parent.parent / ".ci" / "node" / "node_modules" / "axe-core" / "axe.min.js"
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
WIDE = {"width": 1400, "height": 1000}
# payload keys a person never needs to read (internal bookkeeping)
INTERNAL = (
    "created_at_ts",
    "created_order",
    "lineage",
    "superseded_by",
    "expires_ts",
    "_node_content",
    "_node_type",
    "ref_doc_id",
    "content_hash",
    "physical_page_index",
)
GENERATED = 45  # memories over two years, beside the sample's five
PAGES = [
    "/ui/",
    "/ui/browse/memory",
    "/ui/browse/memory?page=2",
    "/ui/browse/memory?query=embedded+engine",
    "/ui/browse/pdf",
    "/ui/browse/pdf?document=qpdf-page-labels-num-tree",
    "/ui/browse/books",
    "/ui/browse/books?book=pride",
    "/ui/browse/dnd",
    "/ui/browse/dnd?document=wotc-srd&kind=spell",
    "/ui/browse/docs",
    "/ui/browse/docs?scope=project_shared&status=active",
    "/ui/search/memory?tool=search&query=engine&min_similarity=-1&explain=true&run=1",
    "/ui/search/pdf?tool=qdrant-find&query=potato&limit=3&explain=true&run=1",
    "/ui/search/books?tool=search_book&book_id=pride&query=Bingley&run=1",
    "/ui/search/dnd?tool=search_dnd_content&query=fire&explain=true&run=1",
    "/ui/search/docs?tool=elf_docs_search_l0&query=deploy&run=1",
    "/ui/memory/memory/duplicates?threshold=0.9",
    "/ui/ingest?profile=docs",
    "/ui/eval",
]


def _generated() -> list[dict[str, Any]]:
    """Memories a fortnight apart, newest in the last month before the sample's oldest."""
    start = datetime(2024, 1, 3, 9, 30, tzinfo=UTC)
    kinds = ["note", "decision", "learning"]
    tags = ["ops", "reading", "travel", "2024", "007"]
    return [
        {
            "content": f"Generated memory {n}: {['rain', 'music', 'garden'][n % 3]} on day {n}.",
            "tags": [tags[n % 5], "generated"],
            "memory_type": kinds[n % 3],
            "created_at": (start + timedelta(days=14 * n)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        for n in range(GENERATED)
    ]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Chromium with a fresh profile, 1400 px wide."""
    if not CHROMIUM.exists() or not AXE.exists():
        missing = CHROMIUM if not CHROMIUM.exists() else AXE
        if os.environ.get("CI"):
            pytest.fail(f"{missing} is missing: CI installs chromium and axe-core (.ci/run)")
        pytest.skip(f"{missing} is missing (apt-get install chromium; .ci/run installs axe-core)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=str(CHROMIUM),
            args=FLAGS,
            headless=True,
            viewport=WIDE,
        )
        yield context
        context.close()


@pytest.fixture(scope="module")
def store(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[tuple[str, UiContext]]:
    """The UI's URL and context over a store holding every sample, a reader's position and
    the generated memories."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("store"))
    runtime = Runtime(settings, embedder=embedder)
    app, ctx = ui_app(runtime, "127.0.0.1")
    ctx.call("ingest_memories", {"path": str(SAMPLES / "memories.json")})
    generated = ctx.uploads / "generated.json"
    generated.parent.mkdir(parents=True, exist_ok=True)
    generated.write_text(json.dumps({"memories": _generated()}))
    ctx.call("ingest_memories", {"path": str(generated)})
    ctx.call("qdrant-ingest-pdf", {"paths": [str(SAMPLES / "qpdf-page-labels-num-tree.pdf")]})
    book = SAMPLES / "pride-and-prejudice-ch1-3.txt"
    ctx.call("ingest_book", {"path": str(book), "book_id": "pride"})
    ctx.call("set_reading_position", {"book_id": "pride", "chapter": 1})
    ctx.call("ingest_dnd", {"paths": [str(SAMPLES / "dnd")]})
    ctx.call("ingest_docs", {"path": str(SAMPLES / "docs.jsonl")})
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
        self.response = response
        return self.tab

    def text(self) -> str:
        return self.tab.locator("main").inner_text()


@pytest.fixture()
def page(browser: Any, store: tuple[str, UiContext]) -> Iterator[Page]:
    tab = Page(browser, store[0])
    yield tab
    tab.tab.close()
    assert tab.errors == [], "console errors"


def _store(ctx: UiContext, content: str, **more: Any) -> str:
    return ctx.call("store_memory", {"content": content, **more})["content_hash"]


def _card(tab: Any, key: str) -> Any:
    return tab.locator(f'#cards .card[data-hash="{key}"]')


def _reads_as_a_product(page: Page, path: str) -> None:
    tab = page.open(path)
    tab.wait_for_load_state("networkidle")
    shown = tab.locator("body").inner_text()
    assert len(page.text()) > 40, path  # the page has its content
    assert not re.search(r"\bNone\b", shown), path
    assert [key for key in INTERNAL if key in shown] == [], path
    sideways = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert sideways <= 0, (path, sideways)
    headers = page.response.headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    tab.evaluate(AXE.read_text())
    found = tab.evaluate("axe.run(document).then(r => r.violations)")
    grave = [(v["id"], v["impact"], len(v["nodes"])) for v in found]
    assert [v for v in grave if v[1] in ("critical", "serious")] == [], path


@pytest.mark.parametrize("path", PAGES)
def test_every_page_reads_as_a_product(page: Page, path: str) -> None:
    """No internal key or Python `None` in what a person reads, no sideways scroll at 1400 px,
    the CSP and framing refusal sent, and axe-core finds no critical or serious violation."""
    _reads_as_a_product(page, path)


def test_a_memory_s_pages_read_as_a_product(page: Page, store: tuple) -> None:
    key = _store(store[1], "Product: the pages of one memory.", tags=["one"], memory_type="note")
    for path in (f"/ui/memory/memory/edit/{key}", f"/ui/memory/memory/history/{key}"):
        _reads_as_a_product(page, path)


def test_a_narrow_window_scrolls_only_down(page: Page) -> None:
    page.tab.set_viewport_size({"width": 480, "height": 900})
    for path in ("/ui/browse/memory", "/ui/search/pdf?tool=qdrant-find&query=potato&run=1"):
        tab = page.open(path)
        assert tab.locator(".card").count() > 0
        sideways = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert sideways <= 0, (path, sideways)


def test_memories_are_cards_newest_first_with_their_actions(page: Page) -> None:
    tab = page.open("/ui/browse/memory")
    cards = tab.locator("#cards .card")
    assert cards.count() == 20
    times = [cards.nth(i).locator("time").get_attribute("datetime") for i in range(20)]
    assert times == sorted(times, reverse=True)
    first = cards.first
    for action in ("edit", "history", "delete"):
        control = first.locator(".actions").get_by_text(action, exact=True)
        box = control.bounding_box()
        assert box is not None and box["x"] + box["width"] <= WIDE["width"], action
    assert first.locator(".chip").count() >= 1 and first.locator(".type").count() == 1
    assert "newest first" in tab.locator("#summary").inner_text()


def test_memory_pages_go_next_and_back_in_order(page: Page) -> None:
    tab = page.open("/ui/browse/memory")
    summary = tab.locator("#summary").inner_text()
    total = int(re.match(r"([\d,]+) memories", summary).group(1).replace(",", ""))
    assert total >= 5 + GENERATED
    last_of_first = tab.locator("#cards .card time").last.get_attribute("datetime")
    tab.click("#next-page")
    assert "page 2 of" in tab.locator(".pager").inner_text()
    assert tab.locator("#cards time").first.get_attribute("datetime") <= last_of_first
    tab.click("#previous-page")
    assert tab.locator("#cards time").last.get_attribute("datetime") == last_of_first


def test_the_timeline_spans_every_memory_and_each_bar_opens_its_month(page: Page) -> None:
    tab = page.open("/ui/browse/memory")
    bars = tab.locator("#timeline .bar")
    caption = tab.locator("#timeline figcaption").inner_text()
    assert "Jan 2024 to" in caption  # the oldest generated memory's month, not a last year
    first, last = bars.first.get_attribute("aria-label"), bars.last.get_attribute("aria-label")
    assert first.startswith("Jan 2024") and bars.count() >= 24, (first, last)
    assert first == "Jan 2024: 3 memories"  # the 3rd, 17th and 31st
    bars.first.focus()
    tab.keyboard.press("Enter")
    tab.wait_for_url(re.compile(r"start_date=2024-01-01&end_date=2024-01-31"))
    days = [t.get_attribute("datetime")[:7] for t in tab.locator("#cards time").all()]
    assert days == ["2024-01"] * 3


def test_filters_narrow_by_tag_type_and_dates_even_numeric_tags(page: Page) -> None:
    tab = page.open("/ui/browse/memory")
    tab.locator("#tag-cloud a", has_text="2024").click()
    cards = tab.locator("#cards .card")
    assert cards.count() == GENERATED // 5
    assert all("2024" in c.locator(".meta").inner_text() for c in cards.all())
    tab = page.open("/ui/browse/memory?tags=007")
    assert tab.locator("#cards .card").count() == GENERATED // 5
    tab.select_option('#filters [name="memory_type"]', "decision")
    tab.fill('#filters [name="start_date"]', "2025-01-01")
    tab.click("#filters button[type=submit]")
    metas = [c.inner_text() for c in tab.locator("#cards .meta").all()]
    assert metas and all("007" in m and "decision" in m for m in metas)
    assert all(t.get_attribute("datetime") >= "2025" for t in tab.locator("#cards time").all())
    page.open("/ui/browse/memory?tags=%C2%B2")  # "²": a digit to Python, still a plain tag
    assert "0 memories" in tab.locator("#summary").inner_text()


def test_searching_memories_orders_them_by_relevance(page: Page) -> None:
    tab = page.open("/ui/browse/memory")
    tab.fill('#filters [name="query"]', "embedded engine")
    tab.click("#filters button[type=submit]")
    assert "by relevance" in tab.locator("#summary").inner_text()
    assert "embedded engine" in tab.locator("#cards .text").first.inner_text()
    assert "similarity" in tab.locator("#cards .meta").first.inner_text()


def test_a_pdf_reads_by_document_then_page_under_its_printed_labels(
    page: Page, store: tuple
) -> None:
    document = "qpdf-page-labels-num-tree"
    first = store[1].call(
        "qdrant-find", {"query": "potato", "document_id": document, "physical_page_index": 0}
    )
    tab = page.open("/ui/browse/pdf")
    tab.locator("#documents a", has_text="qpdf-page-labels-num-tree").click()
    headings = [h.inner_text() for h in tab.locator(".pdf-page h2").all()]
    assert len(headings) == 5 and headings[0].startswith("Page ")
    indexes = [int(s.get_attribute("id").split("-")[1]) for s in tab.locator(".pdf-page").all()]
    assert indexes == sorted(indexes) == list(range(5))
    assert headings[0].split()[1] == first["hits"][0]["page_label"]  # as the PDF prints it
    tab.click("#next-page")
    indexes = [int(s.get_attribute("id").split("-")[1]) for s in tab.locator(".pdf-page").all()]
    assert indexes == list(range(5, 10))


def test_a_book_shows_the_reader_up_to_the_position_and_withholds_the_rest(
    page: Page, store: tuple
) -> None:
    position = store[1].call("get_reading_position", {"book_id": "pride"})
    tab = page.open("/ui/browse/books")
    tab.locator("#books a").first.click()
    assert tab.locator("#reader-position").count() == 1
    sids = [int(s.get_attribute("data-sid")) for s in tab.locator(".sentence").all()]
    assert sids and max(sids) == position["sid"] and sids == sorted(set(sids))
    assert ", " not in tab.locator("#chapter-text").inner_text()[:3]
    later = tab.locator("#chapters li", has_text="past your position").first
    assert "Chapter" in later.inner_text()
    later.locator("a").click()
    assert tab.locator(".sentence").count() == 0
    assert "withheld" in tab.locator("#withheld").inner_text()


def test_dnd_lists_a_document_by_kind_in_alphabetical_order(page: Page) -> None:
    tab = page.open("/ui/browse/dnd")
    tab.locator("#documents .chip", has_text="spell").click()
    names = [h.inner_text() for h in tab.locator("#entries h2").all()]
    assert len(names) >= 2 and names == sorted(names, key=str.casefold)


def test_docs_list_by_scope_and_status(page: Page) -> None:
    tab = page.open("/ui/browse/docs")
    tab.locator("#scopes .chip").first.click()
    assert "scope=" in tab.url and "status=" in tab.url
    assert tab.locator("#documents .card").count() >= 1


def test_search_hits_are_cards_with_marked_words_paging_and_ranks(page: Page) -> None:
    tab = page.open("/ui/search/pdf")
    tab.fill('#search-form [name="query"]', "potato")
    tab.fill('#search-form [name="limit"]', "3")
    tab.check('#search-form [name="explain"]')
    tab.click("#search-form button[type=submit]")
    hits = tab.locator("#hits .card")
    assert hits.count() == 3
    assert tab.locator("pre #hits, pre .card").count() == 0  # hits are not terminal text
    first = hits.first
    assert re.match(r".+, page \S+", first.locator(".source").inner_text())
    assert first.locator("mark").first.inner_text().lower() == "potato"
    meta = first.locator(".meta").inner_text()
    assert meta.count("similarity") == 1 and meta.count("score") == 1
    assert not re.search(r"\d\.\d{5,}", tab.locator("main").inner_text())  # rounded for people
    ranks = first.locator("figure.ranks").inner_text()
    assert "meaning" in ranks and "keywords" in ranks and "#1" in ranks
    dropped = tab.locator("#explain-dropped li")
    assert dropped.count() >= 1 and "rank" in dropped.first.inner_text()
    sources = [h.locator(".source").inner_text() for h in hits.all()]
    tab.click("#next-page")
    assert tab.locator("#hits").get_attribute("start") == "4"
    again = [h.locator(".source").inner_text() for h in tab.locator("#hits .card").all()]
    assert again and not set(again) & set(sources)


def test_the_edit_form_holds_every_current_value(page: Page, store: tuple) -> None:
    key = _store(
        store[1],
        "Edit me: the kettle is in the left cupboard.",
        tags=["home", "kitchen"],
        memory_type="learning",
        metadata={"room": "kitchen"},
        expires_at="2099-01-31T09:00:00Z",
    )
    tab = page.open(f"/ui/memory/memory/edit/{key}")
    form = tab.locator("#edit-form")
    assert form.locator('[name="content"]').input_value().startswith("Edit me")
    assert form.locator('[name="tags"]').input_value() == "home, kitchen"
    assert form.locator('[name="memory_type"]').input_value() == "learning"
    assert json.loads(form.locator('[name="metadata"]').input_value()) == {"room": "kitchen"}
    assert form.locator('[name="expires_at"]').input_value().startswith("2099-01-31T09:00:00")
    form.locator("button[type=submit]").click()  # nothing changed
    assert "Nothing changed" in tab.locator("#notice").inner_text()
    tab.locator('#edit-form [name="tags"]').fill("home, kitchen, tea")
    with tab.expect_navigation():
        tab.locator("#edit-form button[type=submit]").click()
    versions = tab.locator("#versions .version")
    assert [v.inner_text() for v in versions.all()] == ["1", "2"]
    assert "tea" in tab.locator("#versions .node.current").inner_text()


def test_history_draws_the_lineage_with_its_merges(page: Page, store: tuple) -> None:
    ctx = store[1]
    first = _store(ctx, "Lineage: the spare key is under the blue pot.")
    other = _store(ctx, "Lineage: the garden tap turns off at the wall.")
    second = ctx.call("update_memory", {"content_hash": first, "content": "Lineage: key moved."})
    merged = ctx.call(
        "merge_memories", {"content_hashes": [second["content_hash"], other], "content": "Both."}
    )
    tab = page.open(f"/ui/memory/memory/history/{merged['content_hash']}")
    nodes = tab.locator("#versions > .node")
    assert nodes.count() == 3
    assert "current" in (nodes.last.get_attribute("class") or "")
    branch = nodes.last.locator(".merged .branch")
    assert branch.count() == 1 and "garden tap" in branch.inner_text()
    branch.locator("a").click()
    assert "garden tap" in tab.locator("#versions").inner_text()


def test_delete_states_its_version_consequence_and_confirms_in_the_page(
    page: Page, store: tuple
) -> None:
    """Reached by keyboard alone: the delete control, its stated consequence, its confirmation."""
    ctx = store[1]
    key = _store(ctx, "Delete me: version one of a note.", tags=["deleting"])
    newer = ctx.call("update_memory", {"content_hash": key, "content": "Delete me: version two."})
    tab = page.open("/ui/browse/memory?tags=deleting")
    card = _card(tab, newer["content_hash"])
    summary = card.locator("details.confirm summary")
    summary.focus()
    tab.keyboard.press("Enter")
    consequence = card.locator("details.confirm p").inner_text()
    assert "Deletes version 2" in consequence and "version 1 stays" in consequence
    assert ctx.call("search", {"tags": ["deleting"]})["total"] == 1  # opening it changed nothing
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.textContent").startswith("delete: yes")
    with tab.expect_navigation():
        tab.keyboard.press("Enter")
    assert ctx.call("search", {"tags": ["deleting"], "include_superseded": True})["total"] == 1


def test_duplicates_keep_threshold_and_limit_and_merging_states_the_count(
    page: Page, store: tuple
) -> None:
    ctx = store[1]
    for text in (
        "Dup: the sky is blue today.",
        "Dup: the sky is blue today!",
        "dup: The sky is blue today",
    ):
        _store(ctx, text, tags=["sky"])
    tab = page.open("/ui/memory/memory/duplicates?threshold=0.8&limit=7&tags=sky")
    assert tab.input_value('#duplicates-form [name="threshold"]') == "0.8"
    assert tab.input_value('#duplicates-form [name="limit"]') == "7"
    group = tab.locator("section.group").first
    assert "3 memories" in group.locator("h2").inner_text()
    similarities = group.locator(".members tbody td:nth-child(2)").all_inner_texts()
    assert len(similarities) == 3 and all(re.match(r"[01]\.\d\d", s) for s in similarities)
    group.locator("details.confirm summary").click()
    assert "3 memories become one" in group.locator(".consequence").inner_text()
    group.locator('input[name="content_hashes"]').last.uncheck()
    assert "2 memories become one" in group.locator(".consequence").inner_text()
    with tab.expect_navigation():
        group.locator("button.merge").click()
    assert "threshold=0.8" in tab.url and "limit=7" in tab.url
    assert tab.input_value('#duplicates-form [name="threshold"]') == "0.8"
    assert ctx.call("search", {"tags": ["sky"]})["total"] == 2


def test_a_group_over_the_merge_size_is_refused_in_one_click(page: Page, store: tuple) -> None:
    ctx = store[1]
    many = ctx.uploads / "chain.json"
    texts = [f"Chain:{' ' * n}the river is high" for n in range(1, MERGE_AT_MOST + 3)]
    many.write_text(json.dumps({"memories": [{"content": t, "tags": ["chain"]} for t in texts]}))
    ctx.call("ingest_memories", {"path": str(many)})
    tab = page.open("/ui/memory/memory/duplicates?tags=chain")
    group = tab.locator("section.group").first
    count = len(texts)
    assert f"{count} memories" in group.locator("h2").inner_text()
    assert f"at most {MERGE_AT_MOST}" in group.locator(".refusal").inner_text()
    group.locator("details.confirm summary").click()
    with tab.expect_navigation() as answer:
        group.locator("button.merge").click()
    assert answer.value.status == 400
    assert f"at most {MERGE_AT_MOST}" in tab.locator("#error").inner_text()
    assert ctx.call("search", {"tags": ["chain"], "page_size": 100})["total"] == count
    assert [e for e in page.errors if "400" not in e] == []  # the browser logs the refusal
    page.errors.clear()


def test_every_control_can_be_reached_by_keyboard(page: Page) -> None:
    """Every link, button, input and disclosure of the main pages takes the keyboard's focus."""
    for path in ("/ui/browse/memory", "/ui/memory/memory/duplicates?threshold=0.9", "/ui/ingest"):
        tab = page.open(path)
        unreachable = tab.evaluate(
            """() => [...document.querySelectorAll(
                    'a[href], button, input, select, textarea, summary')]
                .filter(e => e.type !== 'hidden' && e.checkVisibility())
                .filter(e => { e.focus(); return document.activeElement !== e; })
                .map(e => e.outerHTML.slice(0, 80))"""
        )
        assert unreachable == [], path


def test_a_cross_origin_post_is_refused(page: Page, store: tuple) -> None:
    """A page of another origin (localhost instead of 127.0.0.1, served without the UI's CSP)
    posts the delete form, with the right CSRF token and confirmation even: 403, nothing
    deleted."""
    url, ctx = store
    key = _store(ctx, "Cross-origin: keep me.", tags=["kept"])
    other = url.replace("127.0.0.1", "localhost") + "/elsewhere"
    tab = page.tab
    tab.route(other, lambda route: route.fulfill(body="<p>elsewhere</p>", content_type="text/html"))
    tab.goto(other)
    script = """([action, fields]) => {
        const form = document.createElement("form");
        form.method = "post"; form.action = action;
        for (const [name, value] of fields) {
            const input = document.createElement("input");
            input.type = "hidden"; input.name = name; input.value = value;
            form.appendChild(input);
        }
        document.body.appendChild(form); form.submit();
    }"""
    fields = [["csrf", ctx.csrf], ["content_hash", key], ["confirmed", "yes"]]
    with tab.expect_navigation() as navigation:
        tab.evaluate(script, [url + "/ui/memory/memory/delete", fields])
    assert navigation.value.status == 403
    assert ctx.call("search", {"tags": ["kept"]})["total"] == 1
    assert all("403" in error for error in page.errors)
    page.errors.clear()


def test_ingesting_a_sample_shows_progress_then_the_documents(page: Page) -> None:
    tab = page.open("/ui/ingest?profile=docs")
    tab.click("#use-sample")
    assert tab.input_value('#ingest-form [name="path"]').endswith("docs.jsonl")
    tab.click("#ingest-form button[type=submit]")
    tab.wait_for_selector("#ingest-done", state="visible", timeout=300_000)
    progress = tab.locator("#progress-text").inner_text()
    done, total = re.match(r"(\d+)/(\d+)", progress).groups()
    assert int(total) > 1 and done == total
    tab.click("#browse-link")
    assert tab.locator("#scopes .card").count() > 0


def test_the_eval_page_runs_a_question_file(page: Page, store: tuple) -> None:
    url, ctx = store
    questions = ctx.uploads / "questions.jsonl"
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
    with tab.expect_navigation():
        tab.locator("#missed a").first.click()
    assert tab.input_value('#search-form [name="query"]') == "reading positions"
    assert re.match(r"[1-9]\d* hit", tab.locator("#hit-count").inner_text())
