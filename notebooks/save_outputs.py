"""Run the notebooks and save them with their outputs, so a reader of the repository sees the
tables and charts without running anything: `python notebooks/save_outputs.py [NAME.ipynb ...]`.

Outputs are kept as a reader would want them: temporary directories become `<tmp>`, this
checkout's path `<repo>`, and the stderr stream (progress bars, warnings) is left out. The tests run
the notebooks again from scratch, with these saved outputs cleared first.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
TEMPORARY = re.compile(r"/tmp/[\w.\-/]+")


def _plain(text: str) -> str:
    text = TEMPORARY.sub("<tmp>", text)
    return text.replace(str(HERE.parent), "<repo>").replace(str(HERE.parent.parent), "<repo>/..")


def scrub(notebook: nbformat.NotebookNode) -> None:
    """Make the outputs independent of the run: paths replaced, stderr and timings dropped."""
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs = [out for out in cell.outputs if out.get("name") != "stderr"]
        for output in cell.outputs:
            if "text" in output:
                output["text"] = _plain(output["text"])
            for kind, value in output.get("data", {}).items():
                if kind.startswith("text/") and isinstance(value, str):
                    output["data"][kind] = _plain(value)
        cell.metadata.pop("execution", None)


def save_with_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": HERE}}
    ).execute()
    scrub(notebook)
    nbformat.write(notebook, path)
    print(f"saved {path.name} with its outputs")


if __name__ == "__main__":
    names = sys.argv[1:] or sorted(path.name for path in HERE.glob("*.ipynb"))
    for name in names:
        save_with_outputs(HERE / name)
