"""Every notebook in notebooks/ runs top to bottom on a real kernel, and is committed with its
outputs (tables and charts visible without running it)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _outputs(notebook: nbformat.NotebookNode) -> list[dict]:
    return [output for cell in notebook.cells for output in cell.get("outputs", [])]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:  # run it afresh: the saved outputs must not count
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": path.parent}}
    )
    client.execute()
    outputs = _outputs(notebook)
    assert outputs and not [output for output in outputs if output["output_type"] == "error"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_with_outputs(path: Path) -> None:
    """Regression: the notebooks were committed without outputs, so a reader of the repository
    saw no table or chart (refresh them with `python notebooks/save_outputs.py`)."""
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code" and cell.source.strip()]
    assert all(cell.execution_count for cell in code), "run notebooks/save_outputs.py"
    outputs = _outputs(notebook)
    assert not [output for output in outputs if output["output_type"] == "error"]
    if path.stem == "books":  # the chart is there
        assert any("image/png" in output.get("data", {}) for output in outputs)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_uses_only_the_public_python_api(path: Path) -> None:
    """A notebook is what a user writes: `import scoperag` and its public names, nothing from
    the package's modules."""
    import scoperag

    notebook = nbformat.read(path, as_version=4)
    source = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "import scoperag" in source
    assert not re.findall(r"(?:from|import) scoperag\.\w+", source)
    used = set(re.findall(r"\bscoperag\.(\w+)", source))
    assert used <= set(scoperag.__all__), used - set(scoperag.__all__)
