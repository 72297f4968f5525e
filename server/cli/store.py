"""`scoperag status` and `scoperag check`: the store's state (`server.store_state`) printed or
as JSON."""

from __future__ import annotations

import json

import click


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add `scoperag status` and `scoperag check`."""

    @cli.command()
    @click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
    def status(as_json: bool) -> None:
        """Which process owns the embedded store (pid, command, socket) and which are attached."""
        from scoperag.server.cli.support import load_settings
        from scoperag.server.store_state.status import print_status, store_status

        report = store_status(load_settings())
        if as_json:
            click.echo(json.dumps(report, indent=2))
        else:
            print_status(report)

    @cli.command()
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    @click.option(
        "--accept-loss",
        multiple=True,
        metavar="COLLECTION",
        help="After a reported loss of acknowledged writes: serve COLLECTION again with the "
        "points it holds (restore from an export first if you can). Repeatable.",
    )
    def check(as_json: bool, accept_loss: tuple[str, ...]) -> None:
        """Check every collection: points, segments, indexes, hidden generations, problems
        (exit status 1 if any). Runs beside a running server: it asks the owning process."""
        from scoperag.server.cli.support import load_settings
        from scoperag.server.store_state.check import check_store, print_check

        report = check_store(load_settings(), accept_loss)
        if as_json:
            click.echo(json.dumps({**report.model_dump(), "ok": report.ok}, indent=2))
        else:
            print_check(report)
        if not report.ok:
            raise SystemExit(1)
