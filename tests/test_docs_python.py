"""docs/python.md: its examples run as written, and every name it documents exists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import scoperag
from scoperag.server.profiles import declaration
from scoperag.server.python_api.handle import Profile

PAGE = Path(__file__).resolve().parents[1] / "docs" / "python.md"
TEXT = PAGE.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.DOTALL)


def test_every_example_runs_on_the_bundled_samples(tmp_path: Path) -> None:
    """The blocks run in order in one interpreter, as a reader would run them in a notebook."""
    script = tmp_path / "python_md.py"
    script.write_text("\n".join(BLOCKS), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("SCOPERAG_")} | {
        "SCOPERAG_DATA_DIR": str(tmp_path / "data"),
        "SCOPERAG_IN_PROCESS": "1",  # no resident engine left behind (tests/conftest.py)
    }
    ran = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "qdrant-find -> Invalid value for 'limit'" in ran.stdout
    # the evaluation example scores what its comment says
    assert "[('qdrant-find', 1.0), ('search_book', 1.0)]" in ran.stdout


def test_the_page_has_examples_for_every_section() -> None:
    assert len(BLOCKS) >= 8


def test_every_documented_scoperag_name_is_public() -> None:
    imported = re.findall(r"from scoperag import ([\w, ]+)", TEXT)
    names = {n.strip() for group in imported for n in group.split(",")}
    names |= set(re.findall(r"scoperag\.(\w+)", TEXT))
    assert names, "the page names no public name"
    missing = sorted(name for name in names if name not in scoperag.__all__)
    assert not missing, f"documented but not in scoperag.__all__: {missing}"
    for name in names:
        assert getattr(scoperag, name) is not None


def test_every_documented_profile_method_exists() -> None:
    used = set(re.findall(r"store\.(pdf|books|memory|dnd|docs)\.(\w+)\(", TEXT))
    assert used
    components = {"retriever", "postprocessors", "as_query_engine"}
    unknown = sorted(
        (profile, method)
        for profile, method in used
        if method not in declaration(profile).methods
        and not (method in components and callable(getattr(Profile, method, None)))
    )
    assert not unknown, f"documented methods that do not exist: {unknown}"
