"""The tree shows the architecture (docs/architecture.md): no import cycle of any length, imports
that point one way, every room the page lists is in the tree, and no shared code that names a
profile. Read from the source with `ast`, not run. Rooms are sized by their concept, not by a
count of modules or lines."""

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
PACKAGE_FOLDERS = {package.split(".")[-1]: [folder] for folder, package in PACKAGES.items()}
HANDLER = re.compile(r"(scoperag(?:\.\w+)+):\w+")
# the layers, lowest first: a module imports only from its own layer or those below it
LAYERS = [
    ("scoperag.core",),
    ("scoperag.pipelines", "scoperag.retrievers", "scoperag.postprocessors"),
    ("scoperag.server",),
    ("scoperag",),
]
PROFILE_NAMES = {"pdf", "books", "memory", "memories", "dnd", "docs"}


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


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The scoperag modules `name` imports: at the top, inside functions and for annotations
    alike. A handler named by a string (`"scoperag.server.x:Class"`) counts as an import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
            match = HANDLER.fullmatch(node.value)
            found.add(match[1] if match else "")
    return {module for module in found if module in modules and module != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _layer(module: str) -> int:
    for level, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(f"{p}.") for p in prefixes):
            return level
    raise AssertionError(module)


def test_the_graph_holds_the_whole_package() -> None:
    graph = _graph()
    assert len(graph) > 150
    assert "scoperag.core.engine.edge.search" in graph["scoperag.core.engine.edge.backend"]
    assert "scoperag.server.profiles.pdf.service" in graph["scoperag.server.profiles.pdf.tools"]


def test_cycles_are_found_through_any_length() -> None:
    """The cycle finder itself: a ring of three and a pair, beside a chain that is no cycle."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d", "f"}, "f": set()}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["d", "e"]]


def test_no_import_cycle_of_any_length() -> None:
    assert _cycles(_graph()) == []


def test_imports_point_one_way() -> None:
    """core <- pipelines, retrievers, postprocessors <- server <- the public API (`scoperag`)."""
    upward = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(module)
    ]
    assert upward == []


# The surfaces' own rooms, which no other room of `server` imports: what two of them share lives
# in a room below them (`server/results/`, `server/store_state/`, `server/tool_session.py`).
SURFACES = ("scoperag.server.cli", "scoperag.server.python_api")
# what may import a surface's room besides itself: a profile's own commands and Python object,
# the resident engine that runs the CLI's commands for its doors, and `scoperag eval
# --compare`'s PARAM=VALUE, read as the CLI reads an option's text
SURFACE_PARTS = re.compile(
    r"scoperag\.server\.(profiles\.\w+\.(commands|python_api|demo)|daemon(\.\w+)*)"
)
READS_AS_THE_CLI = {"scoperag.server.eval_output -> scoperag.server.cli.tool_arguments"}


def test_no_room_imports_a_surface_sideways() -> None:
    """The web UI, the MCP and HTTP apps and the rooms they share never import the CLI's or
    the Python API's modules."""
    graph = _graph()
    assert "scoperag.server.cli.support" in graph["scoperag.server.profiles.pdf.commands"]
    sideways = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if module.startswith("scoperag.server.") and not SURFACE_PARTS.fullmatch(module)
        for target in targets
        if any(target.startswith(f"{room}.") for room in SURFACES)
        and not any(module == room or module.startswith(f"{room}.") for room in SURFACES)
    )
    assert [edge for edge in sideways if edge not in READS_AS_THE_CLI] == []


def _listed_rooms() -> list[str]:
    """The paths in the first column of docs/architecture.md's table of rooms."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page.split("## The rooms", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return [path for row in rows for path in re.findall(r"`([^`]+)`", row.split("|")[1])]


def test_every_room_the_architecture_page_lists_is_in_the_tree() -> None:
    listed = _listed_rooms()
    assert len(listed) > 20 and "core/engine/sharing/" in listed
    missing = [path for path in listed if not (ROOT / path.replace("<name>", "pdf")).exists()]
    assert missing == []


def test_every_folder_of_code_is_a_room_the_page_lists() -> None:
    """A folder of modules in `core/` or `server/` is listed: itself, a room inside it, or the
    room it is part of (`server/profiles/<name>/` covers every profile's folder)."""
    listed = [path.split("<name>")[0].rstrip("/") for path in _listed_rooms()]
    folders = {
        str(path.parent.relative_to(ROOT))
        for top in ("core", "server")
        for path in (ROOT / top).rglob("__init__.py")
        if path.parent != ROOT / top
    }
    assert "core/engine/edge" in folders and "server/profiles/memory" in folders

    def covered(folder: str, room: str) -> bool:
        return f"{folder}/".startswith(f"{room}/") or room.startswith(f"{folder}/")

    unlisted = {folder for folder in folders if not any(covered(folder, r) for r in listed)}
    assert unlisted == set()


def _shared(name: str) -> bool:
    """Code every profile shares: not a profile's folder, contract or pipeline."""
    own = ("scoperag.server.profiles.", "scoperag.core.contracts.", "scoperag.pipelines.")
    return not name.startswith(own) or name in {
        "scoperag.server.profiles",
        "scoperag.server.profiles.declaration",
    }


def _compared_names(source: str) -> list[tuple[int, str]]:
    """(line, name) of each profile name a module compares a value with (`x == "memory"`,
    `x in ("books", "dnd")`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                for leaf in ast.walk(side):
                    if isinstance(leaf, ast.Constant) and leaf.value in PROFILE_NAMES:
                        found.append((node.lineno, leaf.value))
    return found


def test_the_name_check_finds_a_branch_on_a_profile() -> None:
    source = 'def kind(name):\n    return 1 if name == "books" else name in ("x", "dnd")\n'
    assert _compared_names(source) == [(2, "books"), (2, "dnd")]


def test_shared_code_never_branches_on_a_profile_name() -> None:
    shared = {name: path for name, path in _modules().items() if _shared(name)}
    assert "scoperag.server.data_admin" in shared and "scoperag.store" in shared
    branches = {
        name: hits for name, path in shared.items() if (hits := _compared_names(path.read_text()))
    }
    assert branches == {}


def test_pyproject_installs_every_package_of_the_tree() -> None:
    """A folder of modules missing from pyproject.toml's `packages` imports from a checkout and
    fails from an install: the list names every folder that holds an `__init__.py` (and, besides,
    only folders of package data that exist)."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join([PACKAGES[folder.parts[0]], *folder.parts[1:]])
        for init in ROOT.glob("*/**/__init__.py")
        if (folder := init.parent.relative_to(ROOT)).parts[0] in PACKAGES
    }
    assert "scoperag.core.engine.edge" in found and "scoperag.server.results" in found
    assert found - listed == set()
    folders = {
        name: ROOT.joinpath(*PACKAGE_FOLDERS[name.split(".")[1]], *name.split(".")[2:])
        for name in listed - found
    }
    assert [name for name, folder in folders.items() if not folder.is_dir()] == []
