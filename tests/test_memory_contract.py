"""memory profile without a store: facet values, creation times, file items, TOON rendering."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import toon_format
from pydantic import TypeAdapter, ValidationError

from scoperag.core.config.settings import Settings
from scoperag.core.contracts import registry
from scoperag.core.contracts.memory import (
    content_hash,
    memory_indexes,
    normalise_tags,
    parse_moment,
    required_indexes,
)
from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.core.filters.days import Day, day_end, day_start, parse_day
from scoperag.core.filters.fields import FieldType, index_plan
from scoperag.pipelines.memories import make_memory, memory_from_item, read_memories
from scoperag.server.profiles.memory.models import MemoryRow, SearchResult
from scoperag.server.profiles.memory.toon_output import PageFigures, toon_result


def test_indexes_cover_every_facet_and_the_numeric_order_key() -> None:
    plan = index_plan(required_indexes(Settings())["memories"])
    assert plan == index_plan(memory_indexes())
    assert plan == {
        "tags": "keyword",
        "memory_type": "keyword",
        "created_at_ts": FieldType.FLOAT.value,
        "content_hash": "keyword",
        "created_order": FieldType.INTEGER.value,
        "superseded_by": "keyword",
        "lineage": "keyword",
        "expires_ts": FieldType.FLOAT.value,
    }
    indexes = registry.required_indexes(Settings(profiles=["memory"]))
    assert indexes == {"memories": memory_indexes()}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, None),
        ("", None),
        ("  ", None),
        ("storage", ["storage"]),
        ("storage, wal ,,sqlite", ["storage", "wal", "sqlite"]),
        (["a", " b ", "a", ""], ["a", "b"]),
        ([], []),
    ],
)
def test_tags_from_a_list_or_a_comma_separated_string(given: object, expected: object) -> None:
    assert normalise_tags(given) == expected


def test_tags_that_are_not_strings_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="'tags'.*comma-separated"):
        normalise_tags(["a", 3])  # type: ignore[list-item]


@pytest.mark.parametrize("bad", ["2026/01/31", "31-01-2026", "2026-1-31", "2026-02-30", "20260131"])
def test_a_day_not_in_yyyy_mm_dd_is_a_clear_error(bad: str) -> None:
    with pytest.raises(ValidationError) as error:
        TypeAdapter(Day).validate_python(bad)
    assert "YYYY-MM-DD" in str(error.value)


def test_a_whole_day_runs_from_its_first_second_to_the_next_midnight() -> None:
    day = parse_day("2026-03-01")
    assert day == date(2026, 3, 1)
    first = datetime(2026, 3, 1, 0, 0, 0, tzinfo=UTC).timestamp()
    last = datetime(2026, 3, 1, 23, 59, 59, 999999, tzinfo=UTC).timestamp()
    assert day_start(day) == first
    assert day_start(day) <= last < day_end(day)
    assert day_end(day) == datetime(2026, 3, 2, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2025-06-12T09:15:00Z", "2025-06-12T09:15:00Z"),
        ("2025-06-12T11:15:00+02:00", "2025-06-12T09:15:00Z"),
        ("2025-06-12T09:15:00", "2025-06-12T09:15:00Z"),
        ("2025-06-12T09:15:00.250Z", "2025-06-12T09:15:00.250000Z"),
        (1749719700, "2025-06-12T09:15:00Z"),
        (datetime(2025, 6, 12, 9, 15), "2025-06-12T09:15:00Z"),
    ],
)
def test_creation_times_are_stored_as_rfc3339_utc(given: object, expected: str) -> None:
    memory = make_memory("A memory.", created_at=given)
    assert memory.created_at == expected
    assert memory.created_at_ts == parse_moment(expected).timestamp()


def test_a_memory_is_identified_by_the_sha256_of_its_text() -> None:
    memory = make_memory("  Chose Qdrant.  ", tags="db, decision", memory_type=" decision ")
    assert memory.content == "Chose Qdrant."
    assert memory.content_hash == content_hash("Chose Qdrant.") != content_hash("Chose Qdrant")
    assert len(memory.content_hash) == 64
    assert (memory.tags, memory.memory_type) == (["db", "decision"], "decision")
    assert make_memory("x").memory_type == "note"


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"content": "  "}, "content"),
        ({"content": "x", "memory_type": ""}, "memory_type"),
        ({"content": "x", "created_at": "yesterday"}, "created_at"),
        ({"content": "x", "metadata": ["not", "a", "dict"]}, "metadata"),
    ],
)
def test_bad_memory_fields_name_the_parameter(kwargs: dict, parameter: str) -> None:
    with pytest.raises(InvalidParameterError, match=f"'{parameter}'"):
        make_memory(**kwargs)


def test_a_devbench_item_keeps_its_id_in_metadata(shared_data: Path) -> None:
    raw = json.loads((shared_data / "memories" / "devbench_dataset.json").read_text())
    item = raw["memories"][0]
    memory = memory_from_item(item)
    assert memory.content == item["content"]
    assert memory.tags == item["tags"]
    assert memory.memory_type == item["memory_type"]
    assert memory.created_at == item["created_at_iso"]
    assert memory.metadata == {"id": item["id"]}


def test_a_file_with_bad_items_reports_each_and_keeps_the_rest(tmp_path: Path) -> None:
    items = [
        {"content": "good one", "tags": ["a"], "type": "learning", "timestamp": 0},
        {"tags": ["no content"]},
        "just a string",
        {"content": "bad time", "created_at": "last tuesday"},
        {"content": "good two", "metadata": {"source": "test"}, "project": "scoperag"},
    ]
    path = tmp_path / "memories.json"
    path.write_text(json.dumps(items))
    memories, skipped = read_memories(path)
    assert [m.content for m in memories] == ["good one", "good two"]
    assert memories[0].memory_type == "learning"
    assert memories[0].created_at == "1970-01-01T00:00:00Z"
    assert memories[1].metadata == {"project": "scoperag", "source": "test"}
    assert [line.split(":")[0] for line in skipped] == ["item 1", "item 2", "item 3"]
    assert "'content'" in skipped[0] and "'created_at'" in skipped[2]


@pytest.mark.parametrize("text", ["not json", '{"memories": 3}', "42"])
def test_a_file_that_is_not_a_list_of_memories_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ScoperagError, match="bad.json"):
        read_memories(path)


@pytest.mark.parametrize(("total", "pages", "more"), [(0, 0, False), (20, 2, False), (21, 3, True)])
def test_page_figures(total: int, pages: int, more: bool) -> None:
    figures = PageFigures.of(page=2, page_size=10, total=total)
    assert (figures.total_pages, figures.has_more) == (pages, more)


def test_toon_text_starts_with_the_paging_header_and_decodes_to_the_structured_content() -> None:
    rows = [
        MemoryRow(
            content=f"memory {i}, with a comma",
            tags=["a", "b c"],
            memory_type="note",
            created_at="2026-01-01T00:00:00Z",
            content_hash=content_hash(str(i)),
        )
        for i in range(2)
    ]
    result = SearchResult(
        **PageFigures.of(1, 2, 5).model_dump(), mode="tag", order="newest", memories=rows
    )
    tool_result = toon_result(result)
    text = tool_result.content[0].text
    assert text.splitlines()[:5] == [
        "page: 1",
        "page_size: 2",
        "total: 5",
        "total_pages: 3",
        "has_more: true",
    ]
    assert "score:" not in text and "\nnote:" not in text
    assert toon_format.decode(text) == tool_result.structured_content
    assert SearchResult.model_validate(tool_result.structured_content) == result
