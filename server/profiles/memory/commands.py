"""The memory profile's commands: `scoperag ingest memory FILE.json`, the `scoperag memory`
group (update, history, merge, duplicates) and `scoperag prune memory --expired`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scoperag.server.cli.support import load_settings, progress_bar

if TYPE_CHECKING:
    from scoperag.server.profiles.memory.models import FindDuplicatesResult


@click.group("memory")
def memory_group() -> None:
    """Look after memories: update one, read its history, find duplicates, merge several."""


@click.group("prune")
def prune_group() -> None:
    """Delete what is no longer wanted."""


def _versions(work: Callable[[Any], Any]) -> Any:
    """`work(MemoryVersions)` on this data dir's store; errors as one line."""
    from scoperag.server.profiles.memory.versions import MemoryVersions
    from scoperag.server.runtime import Runtime

    runtime = Runtime(load_settings())
    try:
        return work(MemoryVersions(runtime))
    finally:
        runtime.close()


def _print_version(result: Any, as_json: bool) -> None:
    data = result.model_dump()
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(f"{data['content_hash']} version {data['version']}: {data['message']}")


@memory_group.command("update")
@click.argument("content_hash")
@click.option("--content", help="New text (default: kept).")
@click.option("--tags", multiple=True, help="New tags, replacing the old (repeat, or a, b).")
@click.option("--type", "memory_type", help="New type (default: kept).")
@click.option("--expires-at", help="RFC 3339 time with a zone; hidden from search after it.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def update_command(
    content_hash: str,
    content: str | None,
    tags: tuple[str, ...],
    memory_type: str | None,
    expires_at: str | None,
    as_json: bool,
) -> None:
    """Write a new version of the memory CONTENT_HASH (or a unique prefix); the old one is
    kept, hidden from search."""
    from scoperag.server.profiles.memory.models import UpdateMemoryParams

    given = {"content": content, "memory_type": memory_type, "expires_at": expires_at}
    given["tags"] = list(tags) or None
    result = _versions(
        lambda versions: versions.update(
            UpdateMemoryParams(
                content_hash=content_hash, **{k: v for k, v in given.items() if v is not None}
            )
        )
    )
    _print_version(result, as_json)


@memory_group.command("history")
@click.argument("content_hash")
@click.option("--json", "as_json", is_flag=True, help="Print the history as JSON.")
def history_command(content_hash: str, as_json: bool) -> None:
    """Every version of a memory, oldest first, from the hash (or a unique prefix) of any."""
    from scoperag.server.data_admin import HASH_SHOWN
    from scoperag.server.profiles.memory.models import MemoryHistoryParams

    result = _versions(lambda v: v.history(MemoryHistoryParams(content_hash=content_hash)))
    if as_json:
        click.echo(json.dumps(result.model_dump(), indent=2))
        return
    for row in result.versions:
        state = (
            f"superseded by {row.superseded_by[:HASH_SHOWN]}" if row.superseded_by else "current"
        )
        click.echo(f"v{row.version} {row.content_hash[:HASH_SHOWN]} {row.updated_at} {state}")
        click.echo(f"   [{', '.join(row.tags)}] {row.memory_type}: {row.content}")


@memory_group.command("merge")
@click.argument("content_hashes", nargs=-1, required=True)
@click.option("--content", help="The merged text (default: the newest member's).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def merge_command(content_hashes: tuple[str, ...], content: str | None, as_json: bool) -> None:
    """Replace two or more memories (hashes or unique prefixes) by one; they are kept, hidden."""
    from scoperag.server.profiles.memory.models import MergeMemoriesParams

    given = {"content_hashes": list(content_hashes)} | ({"content": content} if content else {})
    result = _versions(lambda versions: versions.merge(MergeMemoriesParams(**given)))
    _print_version(result, as_json)


@memory_group.command("duplicates")
@click.option("--threshold", type=float, default=None, help="Cosine similarity, (0, 1].")
@click.option("--tags", multiple=True, help="Only memories with any of these tags.")
@click.option("--type", "memory_type", default=None, help="Only memories of this type.")
@click.option("--limit", type=click.IntRange(1, 1000), default=None, help="Groups shown.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def duplicates_command(
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


@prune_group.command("memory")
@click.option("--expired", is_flag=True, help="Delete the memories past their expires_at.")
@click.option("--yes", is_flag=True, help="Delete without asking.")
def prune_memory(expired: bool, yes: bool) -> None:
    """Delete expired memories (--expired), after listing them."""
    from scoperag.server.data_admin import HASH_SHOWN
    from scoperag.server.profiles.memory import expiry

    if not expired:
        raise click.UsageError("Say what to prune: --expired (memories past their expires_at).")
    found = _versions(lambda versions: expiry.expired(versions.runtime.backend))
    if not found:
        click.echo("No memory has expired.")
        return
    for payload in found:
        words = " ".join(payload["content"].split()[:12])
        click.echo(
            f"{payload['content_hash'][:HASH_SHOWN]} expired {payload['expires_at']}: {words}"
        )
    if not yes:
        click.confirm(f"Delete these {len(found)} expired memories?", abort=True, err=True)
    hashes = [payload["content_hash"] for payload in found]
    deleted = _versions(
        lambda versions: expiry.prune(
            versions.runtime.backend, versions.runtime.settings.data_dir, hashes
        )
    )
    click.echo(f"Deleted {deleted} expired memories.")


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add the memory profile's commands."""
    cli.add_command(memory_group)
    cli.add_command(prune_group)

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
            report = import_memories(
                file,
                runtime.backend,
                runtime.embedder,
                lambda d, t: bar(d, t, file.name),
                runtime.settings.data_dir,
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


def _call_tool(tool: str, arguments: dict[str, Any]) -> Any:
    """The tool's result model, called as an MCP client would (its checks and errors)."""
    from scoperag.server.mcp.app import build_server
    from scoperag.server.runtime import Runtime
    from scoperag.server.tool_session import ToolSession

    runtime = Runtime(load_settings())
    session = None
    try:
        session = ToolSession(build_server(runtime), progress=False)
        return session.call(tool, arguments)
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
