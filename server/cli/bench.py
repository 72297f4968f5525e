"""`scoperag bench`: the benchmark harness of a source checkout (`evals/bench.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

BENCH_SCRIPT = Path(__file__).resolve().parents[2] / "evals" / "bench.py"


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add `bench`."""

    @cli.command(
        context_settings={"ignore_unknown_options": True, "help_option_names": []},
        add_help_option=False,
    )
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def bench(args: tuple[str, ...]) -> None:
        """Run the benchmark harness of a source checkout (evals/bench.py, which an installed
        package does not carry; `scoperag bench --help` there for its options)."""
        if not BENCH_SCRIPT.is_file():
            raise click.ClickException(
                f"{BENCH_SCRIPT} is not here: the benchmark needs a source checkout (its evals/ "
                "folder); clone the repository and run `scoperag bench` from its venv."
            )
        import runpy

        saved = sys.argv, list(sys.path)
        sys.argv = [str(BENCH_SCRIPT), *args]
        sys.path.insert(0, str(BENCH_SCRIPT.parent))  # its sibling modules
        try:
            runpy.run_path(str(BENCH_SCRIPT), run_name="__main__")
        finally:
            sys.argv, sys.path[:] = saved
