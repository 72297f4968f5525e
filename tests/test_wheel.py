"""The non-editable wheel, installed into a fresh venv and run from a foreign directory.

The wheel holds `scoperag` alone (generic top-level modules such as `core` or `server` would
clash with a user's own folders), its install pulls no PyTorch, and `demo` (in a throwaway
store), `serve` (tools/list over stdio) and `list`/`delete` on every profile's bundled sample
work from the installed package without the checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from scoperag.core.embedding.packaged_model import MODEL_DISTRIBUTION

REPO = Path(__file__).resolve().parents[1]
INSTALL_SECONDS = 600  # a cold install on a busy 2-core machine; it takes about 2 minutes


def _checkout_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return [name for name in listed.stdout.splitlines() if (REPO / name).is_file()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the checkout (the build leaves nothing in the repo)."""
    source = tmp_path_factory.mktemp("source")
    for name in _checkout_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    dist = tmp_path_factory.mktemp("dist")
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)]
    subprocess.run(pip, check=True, capture_output=True)
    (built,) = dist.glob("scoperag-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its dependencies, installed as a user would."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    started = time.monotonic()
    subprocess.run(
        [str(root / "bin" / "pip"), "install", "-q", str(wheel)],
        check=True,
        capture_output=True,
        timeout=INSTALL_SECONDS,
    )
    print(f"\nwheel install into a fresh venv: {time.monotonic() - started:.0f} s")
    return root


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A foreign working directory holding a `core/` package of its own (the old clash)."""
    cwd = tmp_path_factory.mktemp("elsewhere")
    (cwd / "core").mkdir()
    (cwd / "core" / "__init__.py").write_text("raise ImportError('the user folder core/')\n")
    return cwd


def _env(venv: Path, data_dir: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith("SCOPERAG_")}
    keep.pop("PYTHONPATH", None)
    bin_dir = str(venv / "bin")
    # the wheel's commands go through a resident engine, gone a second after the test's last
    return {
        **keep,
        "PATH": f"{bin_dir}:{keep['PATH']}",
        "SCOPERAG_DATA_DIR": str(data_dir),
        "SCOPERAG_DAEMON_IDLE_SECONDS": "1",
    }


def _run(venv: Path, home: Path, data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(venv / "bin" / "scoperag"), *args],
        cwd=home,
        env=_env(venv, data_dir),
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_wheel_holds_scoperag_alone_with_samples_and_license(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"scoperag", "scoperag-0.1.0.dist-info"}
    samples = "scoperag/server/samples/"
    for sample in [
        "qpdf-manual-5.1.3.pdf",
        "docs.jsonl",
        "memories.json",
        "dnd/wotc-srd/Spell.json",
    ]:
        assert samples + sample in names
    assert "scoperag-0.1.0.dist-info/licenses/LICENSE" in names
    assert not [name for name in names if "/evals/" in name or "/tests/" in name]


# the machine-learning stack the onnxruntime encoder makes unnecessary
HEAVY = {"torch", "sentence-transformers", "transformers", "scipy", "scikit-learn"}


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_wheel_requires_the_model_files_and_no_pytorch(wheel: Path) -> None:
    """The model comes from a dependency-free wheel of its files; nothing required (the test
    extra included) is PyTorch or a library built on it."""
    metadata = zipfile.ZipFile(wheel).read("scoperag-0.1.0.dist-info/METADATA").decode()
    required = {
        _requirement_name(line.removeprefix("Requires-Dist: "))
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist: ")
    }
    assert MODEL_DISTRIBUTION in required
    assert {"onnxruntime", "tokenizers", "pytest"} <= required
    assert not required & HEAVY


def test_install_pulls_no_pytorch(venv: Path) -> None:
    """Every distribution the install brought (dependencies of dependencies too)."""
    listed = subprocess.run(
        [str(venv / "bin" / "pip"), "list", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    installed = {item["name"].lower().replace("_", "-") for item in json.loads(listed.stdout)}
    assert {"scoperag", MODEL_DISTRIBUTION, "onnxruntime"} <= installed
    assert not installed & HEAVY
    assert not installed & {"pytest", "pytest-asyncio"}  # the Ollama integration is an extra


def test_demo_runs_in_a_throwaway_store(venv: Path, home: Path, tmp_path: Path) -> None:
    user_store = tmp_path / "user-store"
    result = _run(venv, home, user_store, "demo")
    assert result.returncode == 0, result.stderr
    assert "qpdf-page-labels-num-tree p.'2' (index 10): Potato 10" in result.stdout
    assert "Removed the demo's temporary store" in result.stdout
    assert not user_store.exists()  # the user's data dir was never created


async def test_serve_answers_tools_list_over_stdio(venv: Path, home: Path, tmp_path: Path) -> None:
    transport = StdioTransport(
        command=str(venv / "bin" / "scoperag"),
        args=["serve", "--profiles", "pdf,docs"],
        env=_env(venv, tmp_path / "data"),
        cwd=str(home),
        keep_alive=False,  # the server process ends with the session
    )
    async with Client(transport) as client:
        tools = {tool.name for tool in await client.list_tools()}
        instructions = client.instructions or ""
    assert {"qdrant-find", "qdrant-delete-document", "elf_docs_search_l0"} <= tools
    assert "store_memory" not in tools and "book" not in instructions


# profile -> (ingest arguments after the sample path, kind for `delete`, a name it stores, grouping)
ROUND_TRIPS = {
    "pdf": ([], "pdf", "qpdf-page-labels-num-tree", "documents"),
    "books": (["--book-id", "pride"], "book", "pride", "books"),
    "memory": ([], "tag", "storage", "tags"),
    "dnd": ([], "dnd", "wotc-srd", "documents"),
    "docs": ([], "docs", "runbook-search-indexer-00009", "documents"),
}
INGEST = {"pdf": "pdf", "books": "book", "memory": "memories", "dnd": "dnd", "docs": "docs"}


def _groups(venv: Path, home: Path, data_dir: Path) -> dict[str, dict[str, dict[str, int]]]:
    listed = _run(venv, home, data_dir, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return {data["profile"]: data["groups"] for data in json.loads(listed.stdout)["profiles"]}


def test_list_delete_round_trip_on_every_profile(venv: Path, home: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    for profile, (extra, _kind, _name, _group) in ROUND_TRIPS.items():
        sample = _run(venv, home, data_dir, "samples", profile).stdout.strip()
        if profile == "pdf":
            sample = str(Path(sample) / "qpdf-page-labels-num-tree.pdf")
        ingested = _run(venv, home, data_dir, "ingest", INGEST[profile], sample, *extra)
        assert ingested.returncode == 0, ingested.stderr
    before = _groups(venv, home, data_dir)
    refused = _run(venv, home, data_dir, "delete", "docs", "no-such-doc", "--yes")
    assert refused.returncode == 1 and "Stored: api-reference-" in refused.stderr
    for profile, (_extra, kind, name, group) in ROUND_TRIPS.items():
        assert before[profile][group].get(name, 0) > 0, (profile, before[profile])
        deleted = _run(venv, home, data_dir, "delete", kind, name, "--yes", "--json")
        assert deleted.returncode == 0, deleted.stderr
        assert json.loads(deleted.stdout)["points_deleted"] == before[profile][group][name]
    after = _groups(venv, home, data_dir)
    for profile, (_extra, _kind, name, group) in ROUND_TRIPS.items():
        assert name not in after[profile][group]


def test_bench_says_it_needs_a_checkout(venv: Path, home: Path, tmp_path: Path) -> None:
    result = _run(venv, home, tmp_path, "bench")
    assert result.returncode == 1 and "needs a source checkout" in result.stderr
