"""`scoperag ingest memory FILE.json` (a JSON list of memories, devbench format too) and
`scoperag memory duplicates`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scoperag.server.cli.support import load_settings, progress_bar, run_friendly

if TYPE_CHECKING:
    from scoperag.server.profiles.memory.models import FindDuplicatesResult


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add the memory profile's commands."""

    @ingest.command("memory")
    @click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def ingest_memories(file: Path, as_json: bool) -> None:
        """Import memories from FILE.json: a list of {content, tags, memory_type, created_at,
        metadata} objects, or an object with a `memories` list. Content already stored is kept
        once; a bad item is reported and skipped."""
        from scoperag.pipelines.memories import import_memories
        from scoperag.server.runtime import Runtime

        runtime = Runtime(load_settings())
        bar = progress_bar("memories")
        try:
            report = run_friendly(
                lambda: import_memories(
                    file,
                    runtime.backend,
                    runtime.embedder,
                    lambda d, t: bar(d, t, file.name),
                    runtime.settings.data_dir,
                )
            )
        finally:
            runtime.close()
        if as_json:
            click.echo(json.dumps(report.model_dump(), indent=2))
        else:
            for line in report.skipped:
                click.secho(f"{file.name}: {line}", fg="yellow", err=True)
            click.echo(
                f"{file.name}: stored {len(report.stored)}, already stored "
                f"{len(report.duplicates)}, skipped {len(report.skipped)}"
            )
        if report.skipped and not (report.stored or report.duplicates):
            sys.exit(1)

    @cli.group("memory")
    def memory() -> None:
        """Look after the memory profile's memories."""

    @memory.command("duplicates")
    @click.option("--threshold", type=float, default=None, help="Cosine similarity, (0, 1].")
    @click.option("--tags", multiple=True, help="Only memories with any of these tags.")
    @click.option("--type", "memory_type", default=None, help="Only memories of this type.")
    @click.option("--limit", type=click.IntRange(1, 1000), default=None, help="Groups shown.")
    @click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
    def duplicates(
        threshold: float | None,
        tags: tuple[str, ...],
        memory_type: str | None,
        limit: int | None,
        as_json: bool,
    ) -> None:
        """Groups of memories with the same text (case and whitespace aside) or embeddings at
        least --threshold alike (default 0.92); the newest member of each group first."""
        given = {"threshold": threshold, "tags": list(tags) or None}
        given |= {"memory_type": memory_type, "limit": limit}
        arguments = {name: value for name, value in given.items() if value is not None}
        result = _call_tool("find_duplicates", arguments)
        if as_json:
            click.echo(json.dumps(result.model_dump(), indent=2, ensure_ascii=False))
        else:
            click.echo(render_duplicates(result))


def _call_tool(tool: str, arguments: dict[str, Any]) -> Any:
    """The tool's result model, called as an MCP client would (its checks and errors)."""
    from scoperag.server.mcp.app import build_server
    from scoperag.server.python_api.session import ToolSession
    from scoperag.server.runtime import Runtime

    runtime = Runtime(load_settings())
    session = None
    try:
        session = ToolSession(build_server(runtime), progress=False)
        return run_friendly(lambda: session.call(tool, arguments))
    finally:
        if session is not None:
            session.close()
        runtime.close()


def render_duplicates(result: FindDuplicatesResult, width: int = 100) -> str:
    """Each group as a block a person reads: its reason, then one line per member (hash prefix,
    similarity, day, the text's first line cut to `width`)."""
    lines = []
    for number, group in enumerate(result.groups, 1):
        lines.append(f"group {number}: {len(group.members)} memories, {group.reason}")
        for member in group.members:
            text = (member.content.splitlines() or [""])[0]
            head = (
                f"  {member.content_hash[:12]}  {member.similarity:.3f}  {member.created_at[:10]}  "
            )
            room = max(width - len(head), 20)
            lines.append(head + (text if len(text) <= room else text[: room - 3] + "..."))
        lines.append("")
    lines.append(f"{result.total_groups} groups" if result.total_groups != 1 else "1 group")
    if result.note:
        lines.append(result.note)
    return "\n".join(lines)
