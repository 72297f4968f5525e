"""Every import line checked against its profile's contract before anything is written, on a
real memory store through the CLI: a header refused whole by the field it cannot honour, each
bad point refused by its line number and reason while the good ones are written, caps on what
a file may hold, and clear errors (never a traceback) for bytes that are not UTF-8 or gzip cut
short."""

from __future__ import annotations

import base64
import gzip
import json
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from scoperag import Store
from scoperag.core.contracts.memory import COLLECTION
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.server.cli.main import cli
from scoperag.server.samples import SAMPLES

Edit = Callable[[list[dict]], None]


@pytest.fixture(scope="module")
def export_lines(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The memory sample's export, as its lines (a header and five points)."""
    data = tmp_path_factory.mktemp("source")
    with Store(data, profiles=["memory"], embedder=embedder, progress=False) as store:
        store.memory.ingest(str(SAMPLES / "memories.json"))
        store.export("memory", data / "memory.jsonl")
    lines = (data / "memory.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["format"] == "scoperag-export"
    return lines


@pytest.fixture
def run(cli_with_shared_model: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("SCOPERAG_PROFILES", "memory")

    def invoke(path: Path, *options: str) -> tuple[int, str, dict | None]:
        result = cli_with_shared_model.invoke(cli, ["import", str(path), "--json", *options])
        assert "Traceback" not in result.output and "Aborted!" not in result.output
        report = json.loads(result.output) if result.exit_code == 0 else None
        return result.exit_code, result.output, report

    return invoke


def stored(tmp_path: Path) -> int | None:
    """Points in the memory collection of the test's data dir (None: no collection)."""
    backend = EdgeBackend.open(tmp_path / "data" / "edge")
    try:
        return backend.count(COLLECTION, None) if backend.collection_exists(COLLECTION) else None
    finally:
        backend.close()


def edited(lines: list[str], folder: Path, edit: Edit, name: str = "memory.jsonl") -> Path:
    decoded = [json.loads(line) for line in lines]
    edit(decoded)
    path = folder / name
    path.write_text("".join(json.dumps(line) + "\n" for line in decoded), encoding="utf-8")
    return path


def _set(index: int, *keys: str, value: object) -> Edit:
    def edit(lines: list[dict]) -> None:
        target = lines[index]
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return edit


HEADERS: dict[str, tuple[Edit, str]] = {
    "version": (_set(0, "version", value=2), "'version'"),
    "profile": (_set(0, "profile", value="nope"), "'profile'"),
    "embedder against metadata": (
        _set(0, "metadata", "scoperag_embedder", "dimension", value=512),
        "'metadata.scoperag_embedder'",
    ),
    "index type": (_set(0, "indexes", "tags", value="tree"), "'indexes.tags'"),
    "encoding": (_set(0, "dense_encoding", value="float16-hex"), "'dense_encoding'"),
    "embedder dimension": (_set(0, "embedder", "dimension", value="wide"), "'embedder.dimension'"),
}


@pytest.mark.parametrize("case", list(HEADERS))
def test_a_header_that_cannot_be_honoured_writes_nothing_and_names_its_field(
    case: str, export_lines: list[str], run, tmp_path: Path
) -> None:
    edit, field = HEADERS[case]
    code, output, _ = run(edited(export_lines, tmp_path, edit))
    assert code == 1 and "line 1:" in output and field in output, output
    assert "nothing of this section was written" in output
    assert stored(tmp_path) is None


NAN = base64.b64encode(struct.pack("<f", float("nan")) * 384).decode()
POINTS: dict[str, tuple[Edit, str]] = {
    "negative id": (_set(1, "id", value=-3), "'id' -3 is out of range"),
    "id not a UUID": (_set(1, "id", value="not-an-id"), "'id' must be"),
    "id past 64 bits": (_set(1, "id", value=2**64), "out of range"),
    "NaN vector": (_set(1, "dense", value=NAN), "finite"),
    "short vector": (_set(1, "dense", value=[0.5] * 10), "has 10 numbers"),
    "negative sparse index": (_set(1, "sparse", "indices", 0, value=-1), "out of range"),
    "version not a number": (_set(1, "payload", "version", value="two"), "payload 'version'"),
    "tags not text": (_set(1, "payload", "tags", value=[1, 2]), "payload 'tags.0'"),
    "content missing": (lambda lines: lines[1]["payload"].pop("content"), "payload 'content'"),
    "node content not JSON": (_set(1, "payload", "_node_content", value="{"), "_node_content"),
    "duplicate id": (lambda lines: lines.append(dict(lines[3])), "on line 4 already"),
}


@pytest.mark.parametrize("case", list(POINTS))
def test_a_bad_point_is_refused_by_line_and_the_good_ones_are_written(
    case: str, export_lines: list[str], run, tmp_path: Path
) -> None:
    edit, reason = POINTS[case]
    path = edited(export_lines, tmp_path, edit)
    code, output, report = run(path)
    assert code == 0, output
    bad_line = 7 if case == "duplicate id" else 2
    assert report["refused_count"] == 1, report
    assert (
        report["refused"][0].startswith(f"line {bad_line}: not a point")
        and reason in (report["refused"][0])
    ), report["refused"]
    good = 5 if case == "duplicate id" else 4
    assert report["imported"] == good and stored(tmp_path) == good


def test_a_byte_order_mark_is_accepted(export_lines: list[str], run, tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(export_lines).encode() + b"\n")
    code, output, report = run(path)
    assert code == 0 and report["imported"] == 5 and report["refused_count"] == 0, output


def test_a_line_not_utf8_is_refused_by_number(export_lines: list[str], run, tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    raw = [line.encode() for line in export_lines]
    raw[3] = raw[3].replace(b"payload", b"pay\xfflo", 1)
    path.write_bytes(b"\n".join(raw) + b"\n")
    code, output, report = run(path)
    assert code == 0, output
    [refused] = report["refused"]
    assert refused.startswith("line 4: not UTF-8 text (byte 0xff at column "), refused
    assert report["imported"] == 4


def test_a_truncated_gzip_is_a_clear_error_naming_the_line(
    export_lines: list[str], run, tmp_path: Path
) -> None:
    whole = gzip.compress(("\n".join(export_lines * 1) + "\n").encode())
    path = tmp_path / "memory.jsonl.gz"
    path.write_bytes(whole[: len(whole) * 2 // 3])
    code, output, _ = run(path)
    assert code == 1 and str(path) in output and "cut short" in output, output
    assert "line " in output


def test_a_refused_second_section_says_the_first_was_stored(
    export_lines: list[str], run, tmp_path: Path
) -> None:
    second = json.loads(export_lines[0])
    second["version"] = 7
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join([*export_lines, json.dumps(second)]) + "\n", encoding="utf-8")
    code, output, _ = run(path)
    assert code == 1 and "line 7:" in output and "'version'" in output, output
    assert "nothing was imported" not in output
    assert "the sections before it were imported (5 points into 'memories')" in output
    assert stored(tmp_path) == 5


def test_imports_are_capped_in_bytes_and_line_length(
    export_lines: list[str], run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(export_lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("SCOPERAG_MAX_IMPORT_LINE_MB", str(4 / 1024))  # 4 KiB: a point is more
    code, output, report = run(path)
    assert code == 0 and report["imported"] == 0 < report["refused_count"], output
    assert "SCOPERAG_MAX_IMPORT_LINE_MB" in report["refused"][0]
    monkeypatch.delenv("SCOPERAG_MAX_IMPORT_LINE_MB")
    monkeypatch.setenv("SCOPERAG_MAX_IMPORT_MB", str(8 / 1024))  # 8 KiB: the header and a point
    code, output, _ = run(path)
    assert code == 1 and "SCOPERAG_MAX_IMPORT_MB" in output and "line " in output, output


def test_a_gzip_that_expands_past_the_cap_is_stopped_in_a_stream(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """64 MiB of one line, compressed to a few KiB: refused unread, then the file is capped."""
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb") as file:
        for _ in range(64):
            file.write(b" " * (1 << 20))
    assert path.stat().st_size < 1 << 20
    monkeypatch.setenv("SCOPERAG_MAX_IMPORT_MB", "16")
    monkeypatch.setenv("SCOPERAG_MAX_IMPORT_LINE_MB", "1")
    code, output, _ = run(path)
    assert code == 1 and "SCOPERAG_MAX_IMPORT_MB" in output, output


def test_a_state_that_cannot_be_restored_writes_nothing(tmp_path: Path, run) -> None:
    """A books export whose reading positions do not fit: refused before its points are written."""
    header = {
        "format": "scoperag-export",
        "version": 1,
        "profile": "books",
        "collection": "books",
        "embedder": None,
        "points": 0,
        "state": {"reading_positions": [{"reader": 7}]},
    }
    path = tmp_path / "books.jsonl"
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    code, output, _ = run(path)
    assert code == 1 and "line 1: the header's 'state' cannot be restored" in output, output
    assert "nothing of this section was written" in output
