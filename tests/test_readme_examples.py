"""The README's and docs' command-line examples run on the bundled samples and show what the text
around them says: every `scoperag search`, `scoperag call` and `scoperag eval` line of a bash
block (lines with placeholders such as PROFILE or QUERY are syntax, not examples), and the
README's question line scores hit@5 1.000 as it claims; the plain-LlamaIndex examples of
docs/books.md and docs/engine.md run and give what they say. (docs/python.md's examples are run by
tests/test_docs_python.py.)"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from scoperag.server.samples import SAMPLES

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMANDS = ("search", "call", "eval")
PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]{2,}\b")


def examples() -> list[tuple[str, str]]:
    """(page, command line) of each runnable example, in page order."""
    found = []
    for page in PAGES:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL):
            for line in block.splitlines():
                command = line.split("  #")[0].strip()
                words = command.split()
                runnable = words[:1] == ["scoperag"] and words[1:2] and words[1] in COMMANDS
                if runnable and not PLACEHOLDER.search(command):
                    found.append((page.name, command))
    return found


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A data dir holding every profile's bundled sample, ingested as `scoperag samples` says."""
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(tmp_path_factory.mktemp("examples"))}
    env.pop("SCOPERAG_PROFILES", None)
    for args in (
        ["pdf", str(SAMPLES)],
        ["books", str(SAMPLES / "pride-and-prejudice-ch1-3.txt"), "--book-id", "pride"],
        ["memory", str(SAMPLES / "memories.json")],
        ["dnd", str(SAMPLES / "dnd")],
        ["docs", str(SAMPLES / "docs.jsonl")],
    ):
        done = _scoperag(env, "ingest", *args)
        assert done.returncode == 0, done.stderr
    return env


def _scoperag(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scoperag", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_readme_has_search_call_and_eval_examples() -> None:
    commands = {command.split()[1] for page, command in examples() if page == "README.md"}
    assert {"search", "call"} <= commands


def test_every_example_runs(env: dict[str, str]) -> None:
    ran = []
    for page, command in examples():
        done = _scoperag(env, *shlex.split(command)[1:])
        assert done.returncode == 0, (page, command, done.stderr)
        assert done.stdout.strip(), (page, command)
        ran.append((command, done.stdout))
    assert ran
    outputs = dict(ran)
    page_five = (
        'scoperag search pdf "encrypt a file" --document-id qpdf-manual-5.1.3 --page-label 5'
    )
    assert "qpdf-manual-5.1.3, page 5 (index 8)" in outputs[page_five].splitlines()[0]


def test_the_readme_question_scores_what_it_claims(env: dict[str, str], tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("**Scoring your own questions.**")[1]
    assert "scores hit@5 1.000" in section.split("```json")[0]
    question = section.split("```json\n")[1].split("```")[0]
    path = tmp_path / "questions.jsonl"
    path.write_text(question, encoding="utf-8")
    done = _scoperag(env, "eval", str(path))
    assert done.returncode == 0, done.stderr
    assert "qdrant-find" in done.stdout and "hit@5 1.000" in done.stdout
    assert "not in the store" not in done.stdout and "not scored" not in done.stdout


# run after each page's blocks: what the example's text says it gives
CHECKS = {
    "books.md": (
        "from llama_index.core import QueryBundle\n"
        "passages = engine.retrieve(QueryBundle('Who is Mr. Bingley?'))\n"
        "assert passages and all(n.node.metadata['pos_start'] <= 120 for n in passages)\n"
    ),
    "engine.md": (
        "hits = retriever.retrieve('encrypt a file')\n"
        "assert hits and {n.node.metadata['document_id'] for n in hits} == {'qpdf-manual-5.1.3'}\n"
    ),
}
# an LLM that answers offline: the examples build query engines, which resolve one
PRELUDE = (
    "from llama_index.core import Settings as LlamaSettings\n"
    "from llama_index.core.llms import MockLLM\n"
    "LlamaSettings.llm = MockLLM()\n"
)


@pytest.mark.parametrize("page", sorted(CHECKS))
def test_the_llamaindex_examples_run(env: dict[str, str], tmp_path: Path, page: str) -> None:
    """The plain-LlamaIndex examples of docs/books.md and docs/engine.md, on the samples."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks
    script = tmp_path / "example.py"
    script.write_text(PRELUDE + "\n".join(blocks) + CHECKS[page], encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
