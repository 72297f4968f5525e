"""`scoperag daemon run|status|stop`: the data dir's resident engine in the foreground, what it
serves, and stopping it (the next door that needs one starts it again)."""

from __future__ import annotations

import json
from typing import Any

import click

from scoperag.server.daemon import locate


def daemon_status() -> dict[str, Any] | None:
    """The resident engine's own report, or None if none answers."""
    record = locate.read_record(locate.data_dir())
    return None if record is None else locate.ask(record, "daemon.status")


def register(cli: click.Group, ingest: click.Group) -> None:
    @cli.group()
    def daemon() -> None:
        """The data dir's resident engine: started by the first door that needs it (`serve`,
        a command, `scoperag.Store()`), gone after SCOPERAG_DAEMON_IDLE_SECONDS without one."""

    @daemon.command()
    def run() -> None:
        """Run the resident engine in the foreground (Ctrl+C stops it)."""
        from scoperag.server.daemon.resident import main

        main()

    @daemon.command()
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def status(as_json: bool) -> None:
        """Whether a resident engine runs: its pid, version, clients and log."""
        report = daemon_status()
        if as_json:
            click.echo(json.dumps(report, indent=2))
            return
        if report is None:
            click.echo(f"no resident engine runs for {locate.data_dir()}")
            return
        click.echo(f"resident engine: pid {report['pid']}, version {report['version']}")
        click.echo(f"up {report['uptime_seconds']} s; idle exit after {report['idle_seconds']} s")
        click.echo(f"model loaded: {'yes' if report['model_loaded'] else 'no'}")
        click.echo(f"log: {report['log']}")
        for client in report["clients"]:
            click.echo(f"client: pid {client['pid']} ({client['kind']}): {client['command']}")

    @daemon.command()
    def stop() -> None:
        """Stop the resident engine (a write in progress finishes first)."""
        record = locate.read_record(locate.data_dir())
        if record is None or not locate.answers(record):
            click.echo("no resident engine runs")
            return
        locate.stop(record)
        click.echo(f"stopped the resident engine (pid {record.get('pid')})")
