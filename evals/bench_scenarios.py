"""One benchmark scenario per profile: realistic payloads, the tool calls users make, query shapes.

Payloads are validated by each profile's own payload contract (a contract change breaks the
benchmark loudly instead of measuring something else). Distributions give the filters of the
typical calls realistic selectivities: a pdf document is 0.5% of the chunks, a memory type 5%, a
docs doc_type 25%, and so on; `shares` in the results says what each filter really kept.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from bench_corpus import SHARED, Passage
from qdrant_client import models

START = datetime(2024, 11, 21, tzinfo=UTC)
TWO_YEARS = timedelta(days=730)

Payload = Callable[[int, Passage], tuple[dict[str, Any], str]]  # -> (metadata, source id)
Arguments = Callable[[str, random.Random], dict[str, Any]]  # (query text, rng) -> tool arguments


@dataclass
class Call:
    """A typical tool call: its label, the tool and how its arguments are made."""

    label: str
    tool: str
    arguments: Arguments
    browse: bool = False  # query-less: no embedding, ordered scroll


@dataclass
class Scenario:
    profile: str
    collection: str
    payload: Payload
    calls: list[Call]
    setup: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    shapes: dict[str, models.Filter | None] = field(default_factory=dict)
    recency_key: str | None = None  # payload key a query-less browse orders by


def _match(key: str, value: Any) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _moment(n: int) -> datetime:
    return START + TWO_YEARS * random.Random(n).random()


def _pick(rng: random.Random, values: list[str], weights: list[float] | None = None) -> str:
    return rng.choices(values, weights=weights)[0]


# pdf: 200 documents (0.5% of chunks each), 4 chunks a page


def _pdf_payload(n: int, passage: Passage) -> tuple[dict[str, Any], str]:
    from scoperag.core.contracts.pdf import PdfPagePayload

    document, rank = f"doc-{n % 200:03d}", n // 200
    page = rank // 4
    meta = PdfPagePayload(
        document_id=document,
        physical_page_index=page,
        page_label=str(page + 1),
        page_count=max(1, page + 1),
        source=f"{document}.pdf",
        title=f"Document {n % 200}",
        chunk_index=rank % 4,
    )
    return meta.model_dump(), document


def _pdf() -> Scenario:
    return Scenario(
        profile="pdf",
        collection="pdf_pages",
        payload=_pdf_payload,
        calls=[
            Call(
                "qdrant-find, document_id (0.5%)",
                "qdrant-find",
                lambda q, rng: {"query": q, "document_id": f"doc-{rng.randrange(200):03d}"},
            )
        ],
        shapes={"document_id (0.5%)": models.Filter(must=[_match("document_id", "doc-007")])},
    )


# books: 10 books; the reader is halfway through one (about 5% of the chunks)

_BOOKS = 10


def _book_payload(n: int, passage: Passage) -> tuple[dict[str, Any], str]:
    from scoperag.core.contracts.books import BookChunkPayload

    book, sid = f"book-{n % _BOOKS}", n // _BOOKS
    meta = BookChunkPayload(
        book_id=book,
        title=f"Book {n % _BOOKS}",
        chapter=sid // 200 + 1,
        chapter_title=f"Chapter {sid // 200 + 1}",
        pos_start=sid,
        pos_end=sid,
        sentences=[passage.text],
    )
    return meta.model_dump(), book


def _books(size: int) -> Scenario:
    middle = size // _BOOKS // 2
    return Scenario(
        profile="books",
        collection="books",
        payload=_book_payload,
        setup=[("set_reading_position", {"book_id": "book-3", "sentence": middle})],
        calls=[
            Call(
                "search_book, read half of one of 10 books (5%)",
                "search_book",
                lambda q, rng: {"book_id": "book-3", "query": q},
            )
        ],
        shapes={
            "book_id (10%)": models.Filter(must=[_match("book_id", "book-3")]),
        },
    )


# memory: 40 tags (1-3 a memory), 20 types (5% each), two years of creation times

_TAGS = [f"tag-{n:02d}" for n in range(40)]
_TYPES = [f"type-{n:02d}" for n in range(20)]


def _memory_payload(n: int, passage: Passage) -> tuple[dict[str, Any], str]:
    from scoperag.core.contracts.memory import MemoryPayload, content_hash, rfc3339

    rng = random.Random(n)
    moment = _moment(n)
    digest = content_hash(passage.text)
    meta = MemoryPayload(
        content=passage.text,
        content_hash=digest,
        tags=rng.sample(_TAGS, k=rng.randint(1, 3)),
        memory_type=_pick(rng, _TYPES),
        created_at=rfc3339(moment),
        created_at_ts=moment.timestamp(),
        metadata={"source": passage.source},
    )
    return meta.model_dump(), digest


def _memory() -> Scenario:
    return Scenario(
        profile="memory",
        collection="memories",
        payload=_memory_payload,
        calls=[
            Call(
                "search hybrid, one tag (5%)",
                "search",
                lambda q, rng: {
                    "query": q,
                    "mode": "hybrid",
                    "tags": [_pick(rng, _TAGS)],
                },
            ),
            Call(
                "search faceted, type + 90 days (0.6%)",
                "search",
                lambda q, rng: {
                    "query": q,
                    "mode": "faceted",
                    "memory_type": _pick(rng, _TYPES),
                    "start_date": "2025-06-01",
                    "end_date": "2025-08-29",
                },
            ),
            Call(
                "search tag mode, newest first (query-less)",
                "search",
                lambda q, rng: {"mode": "tag", "tags": [_pick(rng, _TAGS)]},
                browse=True,
            ),
        ],
        shapes={"memory_type (5%)": models.Filter(must=[_match("memory_type", "type-07")])},
        recency_key="created_at_ts",
    )


# dnd: three documents (40/35/25%), five kinds, real item names


@cache
def _dnd_names() -> list[str]:
    names = []
    for path in sorted((SHARED / "dnd").glob("*/*.json")):
        items = json.loads(path.read_text(encoding="utf-8"))
        names += [item["fields"]["name"] for item in items if "name" in item.get("fields", {})]
    return sorted(set(names))


_DOCUMENTS = ["wotc-srd", "a5e", "tob"]
_KINDS = ["spell", "creature", "equipment", "character-option", "rule"]
_SCHOOLS = ["abjuration", "conjuration", "divination", "evocation", "illusion", "necromancy"]


def _dnd_payload(n: int, passage: Passage) -> tuple[dict[str, Any], str]:
    from scoperag.core.contracts.dnd import DndItemPayload, name_order

    rng = random.Random(n)
    names = _dnd_names()
    name = names[n % len(names)]
    document = _pick(rng, _DOCUMENTS, [0.40, 0.35, 0.25])
    kind = _KINDS[n % len(_KINDS)]
    typed: dict[str, Any] = {
        "spell": {"level": rng.randint(0, 9), "school": _pick(rng, _SCHOOLS)},
        "creature": {"type": "beast", "challenge_rating": rng.choice([0.125, 0.5, 1.0, 5.0])},
        "equipment": {"item_type": rng.choice(["weapon", "armor", "magic-item"])},
        "character-option": {"option_type": "feat"},
        "rule": {"rule_type": "section"},
    }[kind]
    slug = f"{hashlib.sha1(name.encode()).hexdigest()[:8]}-{n}"
    meta = DndItemPayload(
        document=document,
        document_title=document,
        kind=kind,
        name=name,
        slug=slug,
        name_order=name_order(name),
        **typed,
    )
    return meta.model_dump(exclude_none=True), f"{document}/{kind}/{slug}"


def _dnd() -> Scenario:
    return Scenario(
        profile="dnd",
        collection="dnd",
        payload=_dnd_payload,
        calls=[
            Call(
                "search_dnd_content, one document (35%)",
                "search_dnd_content",
                lambda q, rng: {"query": q, "documents": ["a5e"]},
            ),
            Call(
                "lookup_spell, level + document, by name (query-less)",
                "lookup_spell",
                lambda q, rng: {"level": rng.randint(0, 9), "documents": ["wotc-srd"]},
                browse=True,
            ),
        ],
        shapes={"document (35%)": models.Filter(must=[_match("document", "a5e")])},
        recency_key="name_order",
    )


# docs: 3 scopes, status mostly active, 4 doc types (25%), 20 agents (5%), two years of updates

_DOC_TYPES = ["runbook", "design_doc", "postmortem", "faq"]
_AGENTS = [f"agent-{n:02d}" for n in range(20)]


def _docs_payload(n: int, passage: Passage) -> tuple[dict[str, Any], str]:
    from scoperag.core.contracts.docs import DocChunkPayload

    document = n // 4
    doc_rng = random.Random(document)
    meta = DocChunkPayload(
        scope=_pick(doc_rng, ["agent_private", "project_shared", "org_shared"]),
        status=_pick(doc_rng, ["active", "draft", "archived"], [0.7, 0.2, 0.1]),
        doc_type=_DOC_TYPES[document % 4],
        agent_id=_pick(doc_rng, _AGENTS),
        updated_at=_moment(document).isoformat(),
        doc_id=f"doc-{document}",
        title=f"Document {document}",
        chunk_index=n % 4,
    )
    return meta.model_dump(), f"doc-{document}"


def _docs() -> Scenario:
    return Scenario(
        profile="docs",
        collection="docs",
        payload=_docs_payload,
        calls=[
            Call(
                "elf_docs_search_l0, scope + type + 1 year (~4%)",
                "elf_docs_search_l0",
                lambda q, rng: {
                    "query": q,
                    "scope": "project_shared",
                    "doc_type": _pick(rng, _DOC_TYPES),
                    "updated_after": "2025-11-21T00:00:00Z",
                },
            ),
            Call(
                "elf_docs_search_l0, one agent (5% x active)",
                "elf_docs_search_l0",
                lambda q, rng: {"query": q, "agent_id": _pick(rng, _AGENTS)},
            ),
        ],
        shapes={
            "none (100%)": None,
            "doc_type (25%)": models.Filter(must=[_match("doc_type", "runbook")]),
            "agent_id (5%)": models.Filter(must=[_match("agent_id", "agent-07")]),
        },
    )


def scenarios(size: int) -> list[Scenario]:
    """Every profile's scenario for a corpus of `size` nodes."""
    return [_pdf(), _books(size), _memory(), _dnd(), _docs()]
