"""What crosses the owner's socket keeps its types, and nothing received can name code to run."""

from __future__ import annotations

import importlib
import io
import json
import pkgutil
import socket
import subprocess
import sys
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.engine.disk_space import MIB, DiskFullError
from scoperag.core.engine.edge.errors import MissingIndexError
from scoperag.core.engine.search_request import SearchRequest, SearchResult
from scoperag.core.engine.sharing import wire
from scoperag.core.engine.sharing.owner import RECORD, engine_dir
from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.server.runtime import Runtime

REPO = Path(__file__).resolve().parents[1]


def _round_trip(value: object) -> object:
    return wire.decode(json.loads(json.dumps(wire.encode(value))))


def test_engine_arguments_and_results_come_back_equal() -> None:
    flt = models.Filter(
        must=[models.FieldCondition(key="page", range=models.Range(gte=3))],
        must_not=[models.HasIdCondition(has_id=["a", 5])],
        should=[
            models.FieldCondition(key="k", match=models.MatchExcept(**{"except": ["x"]})),
            models.FieldCondition(key="tags", values_count=models.ValuesCount(gte=2)),
        ],
    )
    request = SearchRequest(collection="c", dense=[0.1, 0.2], filter=flt, limit=3, count_cap=9)
    hit = models.ScoredPoint(id=1, version=0, score=0.5, payload={"a": [1, 2]})
    when = datetime(2025, 3, 1, 12, tzinfo=UTC)
    values = [
        flt,
        models.OrderBy(key="n", direction=models.Direction.DESC),
        {1: 2, False: 3},
        {"at": when},
        request,
        SearchResult(hits=[hit], exists=True, keywords=False, count=1),
    ]
    assert [_round_trip(value) for value in values] == values


def test_a_line_carries_every_string_and_float_exactly() -> None:
    """Lines are written with pydantic-core's JSON, which refuses a lone surrogate (text from a
    damaged PDF can hold one): such a line is written by the json module and still read back."""
    for params in ({"text": "page \ud800 one", "n": 1}, {"vector": [0.1, 1e-300, 2 / 3, 10**30]}):
        stream = io.BytesIO()
        wire.send(stream, {"id": 1, "method": "count", "params": params})
        stream.seek(0)
        assert wire.receive(stream) == {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "count",
            "params": params,
        }


@pytest.mark.parametrize(
    "data",
    [
        {"$type": "scoperag.core.engine.edge.backend:os.system", "value": "id"},
        {"$type": "system", "value": "id"},
        {"$type": "BaseModel", "value": {}},
        {"$type": "TextNode", "value": {}},
    ],
)
def test_a_type_outside_the_table_is_refused(data: dict) -> None:
    with pytest.raises(wire.WireError, match="Unknown type"):
        wire.decode(data)


def _package_modules() -> set[str]:
    """Every module of the package, walked from the folders pyproject.toml maps to it."""
    layout = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set()
    for package, folder in layout["package-dir"].items():
        found.add(package)
        for info in pkgutil.walk_packages([str(REPO / folder)], f"{package}.", lambda _: None):
            found.add(info.name)
    return {name for name in found if name != "scoperag" and not name.endswith(".__main__")}


def _subclasses(cls: type) -> set[type]:
    return {cls, *(found for sub in cls.__subclasses__() for found in _subclasses(sub))}


def _sent(error: BaseException) -> Exception:
    """`error` as an attached process raises it: encoded by the owner, read from a line."""
    return wire.raised(json.loads(json.dumps(wire.error_data(error))))


def test_every_error_of_the_package_crosses_as_itself() -> None:
    modules = _package_modules()
    for name in sorted(modules):
        importlib.import_module(name)
    classes = {c for c in _subclasses(ScoperagError) if c.__module__ in modules}
    names = {c.__name__ for c in classes}
    assert {"DiskFullError", "CorruptCollectionError", "SourceRefusedError"} <= names
    assert {"WireError", "ToolCallError", "IngestStoppedError", "OllamaDimensionError"} <= names
    assert len(classes) >= 20
    for cls in sorted(classes, key=lambda c: (c.__module__, c.__name__)):
        error = cls.__new__(cls)
        Exception.__init__(error, f"{cls.__name__} said: a line, 5 MiB, 'quoted'.")
        again = _sent(error)
        assert type(again) is cls, cls
        assert str(again) == str(error)
    disk_full = DiskFullError(Path("/data/edge"), 100 * MIB, 128 * MIB, "write to the store")
    assert type(_sent(disk_full)) is DiskFullError and str(_sent(disk_full)) == str(disk_full)


def test_errors_come_back_as_their_own_class_or_fail_closed() -> None:
    for error in (MissingIndexError("c", "k", "keyword"), InvalidParameterError("p", 1, "2")):
        again = _sent(error)
        assert type(again) is type(error) and str(again) == str(error)
    assert type(_sent(TimeoutError("slow"))) is TimeoutError
    unknown = wire.raised({"message": "boom", "data": {"type": "os.system"}})
    assert type(unknown) is RuntimeError and "boom" in str(unknown)
    local = _sent(type("LocalError", (ScoperagError,), {})("here"))  # defined outside a module
    assert type(local) is RuntimeError and str(local).endswith("LocalError: here")


@pytest.mark.parametrize(
    "data",
    [
        {"type": "system", "module": "os"},
        {"type": "os.system", "module": "scoperag.core.engine.edge.backend"},
        {"type": "scoperag.core.engine.edge.backend:os.system"},
        {"type": "Path", "module": "scoperag.core.engine.disk_space"},  # there, but no error
        {"type": "ScoperagError", "module": "scoperag.core.engine.disk_space"},  # imported there
        {"type": "DiskFullError", "module": "scoperag.__main__"},  # would run the CLI
        {"type": "Exception", "module": "builtins"},
        {"type": "SystemExit", "module": "builtins"},
        {"type": ["DiskFullError"], "module": {"a": 1}},
    ],
)
def test_an_error_naming_anything_else_is_a_plain_failure(data: dict) -> None:
    again = wire.raised({"message": "boom", "data": data})
    assert type(again) is RuntimeError
    assert str(again) == "The store's owner process failed: boom"


def test_raising_a_received_error_imports_its_module_alone() -> None:
    """Finding the package's modules reads folders: only the error's own module is imported."""
    script = (
        "import sys\n"
        "from scoperag.core.engine.sharing import wire\n"
        "before = set(sys.modules)\n"
        "data = {'type': 'CorruptCollectionError', 'module': 'scoperag.core.engine.store_check'}\n"
        "error = wire.raised({'message': 'm', 'data': data})\n"
        "print(type(error).__name__, 'scoperag.core.engine.store_check' in before)\n"
        "print(*sorted(m for m in set(sys.modules) - before if m.startswith('scoperag')))\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    raised_line, imported_line = ran.stdout.splitlines()
    assert raised_line == "CorruptCollectionError False"
    assert "scoperag.core.engine.store_check" in imported_line.split()
    assert "scoperag.server.cli.main" not in imported_line.split()


def test_the_owner_refuses_an_operation_or_type_it_does_not_know(tmp_path: Path) -> None:
    """A raw client on the socket: an operation outside the table and a type outside the table
    are errors, and nothing runs."""
    settings = Settings(data_dir=tmp_path, backend="edge")
    holder = Runtime(settings)
    try:
        holder.backend.create_collection("c", 3, {})
        record = json.loads((engine_dir(settings) / RECORD).read_text())
        marker = tmp_path / "ran"
        with socket.socket(socket.AF_UNIX) as raw:
            raw.connect(record["socket"])
            stream = raw.makefile("rwb")
            requests = [
                {"id": 1, "method": "__class__", "params": {}},
                {
                    "id": 2,
                    "method": "count",
                    "params": {"args": [{"$type": "os:system", "value": f"touch {marker}"}, None]},
                },
                {"id": 3, "method": "count", "params": {"args": ["c", None]}},
            ]
            answers = []
            for request in requests:
                wire.send(stream, request)
                answers.append(wire.receive(stream))
        assert [answer["error"]["data"]["type"] for answer in answers[:2]] == [
            "InvalidParameterError",
            "WireError",
        ]
        assert answers[2]["result"] == 0 and not marker.exists()
    finally:
        holder.close()
