"""Which process owns the embedded store, and who is attached to it (`scoperag status`, the web
UI's overview)."""

from __future__ import annotations

from typing import Any

import click

from scoperag.core.config.settings import Settings


def store_status(settings: Settings) -> dict[str, Any]:
    """Engine, data dir, the owner (asked over its socket) and the processes attached to it.

    Asking does not open the store nor attach to it; a record whose owner does not answer is
    reported as stale (the next process to open the store replaces it).
    """
    report: dict[str, Any] = {
        "engine": settings.effective_backend,
        "data_dir": str(settings.data_dir),
        "owner": None,
        "attached": [],
    }
    if settings.effective_backend == "server":
        report["note"] = f"A Qdrant server ({settings.qdrant_url}) is shared by every process."
        return report
    from scoperag.core.engine.sharing.channel import (
        OwnerStoppedError,
        OwnerUnreachableError,
        owner_status,
        process_stopped,
    )
    from scoperag.core.engine.sharing.owner import engine_dir, read_record

    record = read_record(engine_dir(settings))
    if record is None:
        report["note"] = "No process holds the store; the next one to use it will own it."
        return report
    if process_stopped(record.get("pid")):
        report["note"] = str(OwnerStoppedError(record))
        return report
    try:
        live = owner_status(record)
    except (OwnerUnreachableError, OwnerStoppedError):
        report["note"] = (
            f"Stale record: pid {record.get('pid')} owned the store and ended without closing "
            "it (killed or crashed); the next process to use the store takes over."
        )
        return report
    report["attached"] = live.pop("attached")
    report["owner"] = live
    return report


def print_status(report: dict[str, Any]) -> None:
    """The status as lines of text."""
    click.echo(f"engine: {report['engine']} (data dir {report['data_dir']})")
    owner = report["owner"]
    if owner:
        click.echo(f"owner: pid {owner['pid']}: {owner['command']}")
        click.echo(f"socket: {owner['socket']}")
        click.echo(f"attached: {len(report['attached'])} process(es)")
        for process in report["attached"]:
            click.echo(f"  pid {process['pid']}: {process['command']}")
    if report.get("note"):
        click.echo(report["note"])
