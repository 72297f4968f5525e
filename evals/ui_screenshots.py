"""Screenshots of every web UI page, for docs/ui.md.

    python evals/ui_screenshots.py [--out docs/ui] [--memories 300]

Builds a store in a temporary folder with every bundled sample (a reader's position saved in
the book) and `--memories` generated memories over two years (a few edited, a few merged, a
few near-duplicates), serves the UI on a free port and takes each page's picture in Debian's
Chromium at 1400 px (a few colours, so the committed files stay small). Prints each file.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from scoperag.core.config.settings import Settings
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES
from scoperag.server.ui.app import ui_app
from scoperag.server.ui.context import UiContext

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from uvicorn_thread import serving  # noqa: E402  (the tests' own uvicorn-in-a-thread)

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOPICS = [
    ("Rotated the backup keys for the {0} cluster; the old ones stop working on Friday.", "ops"),
    ("Read two chapters of {0} on the train; the narrator finally names the house.", "reading"),
    ("The {0} trip needs the passport renewed before March.", "travel"),
    ("Decided to keep the {0} notes in plain Markdown, one file a week.", "writing"),
    ("Learned that the {0} sensor drifts after a week without calibration.", "garden"),
]
NAMES = ["north", "harbour", "Middlemarch", "Lisbon", "tomato", "river", "orchard", "atlas"]
KINDS = ["note", "decision", "learning"]


def generated(count: int) -> list[dict]:
    """`count` memories spread over two years, newest last."""
    start = datetime(2024, 11, 4, 8, 0, tzinfo=UTC)
    memories = []
    for n in range(count):
        text, tag = TOPICS[n % len(TOPICS)]
        memories.append(
            {
                "content": text.format(NAMES[n % len(NAMES)]) + f" ({n})",
                "tags": [tag, ["home", "work"][n % 2]],
                "memory_type": KINDS[n % 3],
                "created_at": (start + timedelta(hours=58 * n)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        )
    return memories


def fill(ctx: UiContext, count: int) -> dict[str, str]:
    """Every sample, `count` memories, an edited and a merged one, near-duplicates; the hashes
    the pages of one memory open."""
    ctx.call("ingest_memories", {"path": str(SAMPLES / "memories.json")})
    path = ctx.uploads / "generated.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"memories": generated(count)}))
    ctx.call("ingest_memories", {"path": str(path)})
    pdfs = [str(p) for p in sorted(SAMPLES.glob("*.pdf"))]
    ctx.call("qdrant-ingest-pdf", {"paths": pdfs})
    book = str(SAMPLES / "pride-and-prejudice-ch1-3.txt")
    ctx.call("ingest_book", {"path": book, "book_id": "pride", "title": "Pride and Prejudice"})
    ctx.call("set_reading_position", {"book_id": "pride", "chapter": 1})
    ctx.call("ingest_dnd", {"paths": [str(SAMPLES / "dnd")]})
    ctx.call("ingest_docs", {"path": str(SAMPLES / "docs.jsonl")})
    first = ctx.call(
        "store_memory",
        {
            "content": "The spare key is under the blue pot.",
            "tags": ["home"],
            "memory_type": "note",
        },
    )["content_hash"]
    other = ctx.call("store_memory", {"content": "The garden tap turns off at the wall."})
    second = ctx.call(
        "update_memory", {"content_hash": first, "content": "The spare key is in the shed now."}
    )
    merged = ctx.call(
        "merge_memories",
        {
            "content_hashes": [second["content_hash"], other["content_hash"]],
            "content": "The spare key is in the shed; the garden tap turns off at the wall.",
        },
    )
    for text in ("The sky is blue today.", "The sky is blue today!", "the sky is  blue today"):
        ctx.call("store_memory", {"content": text, "tags": ["sky"]})
    return {"merged": merged["content_hash"]}


def pages(hashes: dict[str, str]) -> dict[str, str]:
    """File name -> page path."""
    return {
        "overview": "/ui/",
        "browse": "/ui/browse/memory",
        "browse-filtered": "/ui/browse/memory?tags=reading&memory_type=decision",
        "edit": f"/ui/memory/memory/edit/{hashes['merged']}",
        "history": f"/ui/memory/memory/history/{hashes['merged']}",
        "duplicates": "/ui/memory/memory/duplicates?threshold=0.9",
        "pdf": "/ui/browse/pdf",
        "pdf-pages": "/ui/browse/pdf?document=qpdf-manual-5.1.3",
        "book": "/ui/browse/books?book=pride",
        "dnd": "/ui/browse/dnd?document=wotc-srd&kind=spell",
        "docs": "/ui/browse/docs?scope=project_shared&status=active",
        "search": "/ui/search/memory?tool=search&query=spare+key+shed&run=1",
        "explain": "/ui/search/pdf?tool=qdrant-find&query=page+labels&limit=3&explain=true&run=1",
        "ingest": "/ui/ingest?profile=pdf",
        "eval": "/ui/eval",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/ui"))
    parser.add_argument("--memories", type=int, default=300)
    args = parser.parse_args()
    from PIL import Image
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        runtime = Runtime(Settings(data_dir=Path(folder)))
        app, ctx = ui_app(runtime, "127.0.0.1")
        try:
            hashes = fill(ctx, args.memories)
            with serving(app) as url, sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                tab = browser.new_page(viewport={"width": 1400, "height": 1000})
                for name, path in pages(hashes).items():
                    tab.goto(url + path)
                    tab.wait_for_load_state("networkidle")
                    target = args.out / f"{name}.png"
                    tab.screenshot(path=str(target))
                    Image.open(target).convert("RGB").quantize(64).save(target, optimize=True)
                    print(target)
                browser.close()
        finally:
            ctx.close()
            runtime.close()


if __name__ == "__main__":
    main()
