"""docs/memory.md: the Python examples of "Keep memories" run as written, and every `scoperag
memory` / `scoperag prune` command line it shows parses as the CLI declares it."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click

from scoperag.server.cli.main import cli

PAGE = Path(__file__).resolve().parents[1] / "docs" / "memory.md"
TEXT = PAGE.read_text(encoding="utf-8")
SECTION = TEXT[TEXT.index("### Keep memories") : TEXT.index("### Configuration")]
BLOCKS = re.findall(r"```python\n(.*?)```", SECTION, re.DOTALL)
COMMANDS = [
    line.split("#")[0].strip()
    for block in re.findall(r"```bash\n(.*?)```", SECTION, re.DOTALL)
    for line in block.splitlines()
    if line.startswith(("scoperag memory", "scoperag prune", "scoperag list memory"))
]


def test_the_examples_run_and_print_what_the_page_says(tmp_path: Path) -> None:
    assert len(BLOCKS) >= 5
    script = tmp_path / "memory_md.py"
    script.write_text("\n".join(BLOCKS), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPERAG_")}
    env |= {"SCOPERAG_DATA_DIR": str(tmp_path / "data"), "SCOPERAG_PROFILES": "memory"}
    env["SCOPERAG_IN_PROCESS"] = "1"  # no resident engine left behind (tests/conftest.py)
    ran = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    out = ran.stdout
    assert "update: 2 True" in out
    assert "search: ['Deploys happen on Thursdays.']" in out
    assert "superseded: [False, True]" in out
    assert "supersede: 3 True" in out
    assert (
        "history: [(1, 'Deploys happen on Tuesdays.'), (2, 'Deploys happen on Thursdays.'), "
        "(3, 'Deploys happen on Fridays.')]" in out
    )
    assert "merge: 4 Deploys need a green build. ['ops', 'ci']" in out
    assert "expired hidden: 0" in out
    assert "expires_at -> Invalid value for 'expires_at'" in out


def test_every_command_line_shown_parses() -> None:
    assert len(COMMANDS) >= 6
    for line in COMMANDS:
        words = shlex.split(line)[1:]
        command: click.Command = cli
        path = ["scoperag"]
        while isinstance(command, click.Group) and words and words[0] in command.commands:
            path.append(words[0])
            command = command.commands[words.pop(0)]
        assert not isinstance(command, click.Group), line
        command.make_context(" ".join(path), words)  # raises on an unknown option or argument
