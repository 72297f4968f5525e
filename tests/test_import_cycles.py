"""No two of scoperag's modules import each other (read from the source with `ast`, not run)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the repository's folders and the `scoperag.<part>` package each one is installed as
PACKAGES = {
    "scoperag": "scoperag",
    "core": "scoperag.core",
    "pipelines": "scoperag.pipelines",
    "retrievers": "scoperag.retrievers",
    "postprocessors": "scoperag.postprocessors",
    "server": "scoperag.server",
}
TYPE_CHECKING = {"TYPE_CHECKING", "typing.TYPE_CHECKING"}
HANDLER = re.compile(r"(scoperag(?:\.\w+)+):\w+")


def _modules() -> dict[str, Path]:
    """Every module of scoperag by its dotted name (a package by its `__init__.py`)."""
    modules = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def _run_time_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of `tree` but those under `if TYPE_CHECKING:` (imports for annotations only)."""
    nodes = []
    pending = [tree]
    while pending:
        node = pending.pop()
        nodes.append(node)
        if isinstance(node, ast.If) and ast.unparse(node.test) in TYPE_CHECKING:
            pending.extend(node.orelse)
        else:
            pending.extend(ast.iter_child_nodes(node))
    return nodes


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The scoperag modules `name` imports when it runs, in functions too.

    A handler named by a string (`"scoperag.server.x:Class"`, loaded on its first call) counts
    as an import of its module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _run_time_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            submodules = {f"{base}.{alias.name}" for alias in node.names} & modules.keys()
            # `from package import submodule` needs the submodule; any other name, the module
            found.update(submodules if len(submodules) == len(node.names) else {base})
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(HANDLER.fullmatch(node.value)[1] if HANDLER.fullmatch(node.value) else "")
    return {module for module in found if module in modules and module != name}


def _mutual_imports() -> list[tuple[str, str]]:
    modules = _modules()
    imports = {name: _imported(name, path, modules) for name, path in modules.items()}
    return sorted(
        (a, b) for a, targets in imports.items() for b in targets if a < b and a in imports[b]
    )


def test_modules_find_the_whole_package() -> None:
    modules = _modules()
    assert "scoperag.server.mcp.app" in modules
    assert "scoperag.core.contracts.registry" in modules
    assert "scoperag.server.profiles" in modules


def test_no_module_imports_a_module_that_imports_it_back() -> None:
    assert _mutual_imports() == []
