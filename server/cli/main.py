"""The `scoperag` command line: config, path, serve and the `ingest` group; the profiles and the
other modules of this package add their commands."""

from __future__ import annotations

import contextlib
import errno
import faulthandler
import json
import signal
import sys
from functools import partial

import click

from scoperag.server.cli.profile_args import ProfileGroup
from scoperag.server.cli.support import FriendlyGroup, load_settings
from scoperag.server.profiles import declarations, names


@click.group(cls=FriendlyGroup)
@click.version_option(package_name="scoperag")
@click.option(
    "--in-process",
    is_flag=True,
    help="Run the command in this process, not in the data dir's resident engine "
    "(also SCOPERAG_IN_PROCESS=1).",
)
def cli(in_process: bool) -> None:
    """scoperag: metadata-scoped retrieval over Qdrant, served as MCP tools."""


@cli.command()
def config() -> None:
    """Print the effective settings (from SCOPERAG_* environment variables) as JSON."""
    settings = load_settings()
    view = settings.public_view()
    if "profiles" not in settings.model_fields_set:  # every profile: in their declared order
        view["profiles"] = [profile.name for profile in declarations(settings.profiles)]
    click.echo(json.dumps(view, indent=2))


@cli.command()
def path() -> None:
    """Print the data directory (SCOPERAG_DATA_DIR)."""
    click.echo(str(load_settings().data_dir))


@cli.command()
@click.option(
    "--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", default=8000, show_default=True, type=int, help="HTTP port.")
@click.option("--profiles", default=None, help=f"Comma-separated subset of {','.join(names())}.")
def serve(transport: str, host: str, port: int, profiles: str | None) -> None:
    """Run the MCP server over stdio (default) or streamable HTTP."""
    from scoperag.server.cli.terminal import announce, serve_stdio
    from scoperag.server.mcp.app import build_server
    from scoperag.server.mcp.warm_up import start_warm_up
    from scoperag.server.runtime import Runtime

    runtime = Runtime(load_settings(profiles=profiles))
    if transport == "http":
        from scoperag.server.http.security import is_loopback

        if not is_loopback(host) and not runtime.settings.http_token:
            raise click.UsageError(
                f"--host {host} is not a loopback address, so anyone who can reach it could use "
                "the server: set SCOPERAG_HTTP_TOKEN to a secret bearer token, or bind 127.0.0.1."
            )
    mcp = build_server(runtime)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop as on Ctrl+C: close below
    start_warm_up(runtime)  # handlers and model load while the client initialises and lists
    try:
        if transport == "stdio":
            announce("stdio", profiles=profiles)
            serve_stdio(mcp)
            return
        from scoperag.server.http.app import build_http_app
        from scoperag.server.http.limits import http_server

        ready = partial(announce, "http", f"http://{host}:{port}/mcp", profiles)
        with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl+C it handled
            http_server(build_http_app(runtime, mcp, host), host, port, on_ready=ready).run()
    finally:
        runtime.close()  # an owner hands the store on to the processes still using it


@cli.group(cls=ProfileGroup)
def ingest() -> None:
    """Ingest sources into the store (beside running servers: they share the embedded store)."""


def _register_commands() -> None:
    """Each profile's commands (its declaration names the module), the resident engine's, and
    those of every module of this package that defines `register(cli, ingest)`; each keeps
    heavy imports inside its command functions, so `scoperag --help` stays fast."""
    import importlib
    import pkgutil

    import scoperag.server.cli as package

    modules = [profile.commands for profile in declarations()]
    modules.append("scoperag.server.daemon.commands")  # `scoperag daemon ...`
    modules += [
        f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
    ]
    for name in modules:
        register = getattr(importlib.import_module(name), "register", None)
        if register is not None:
            register(cli, ingest)


_register_commands()


def main() -> None:
    """Console-script entry point: errors meant for people end it with one line, no traceback
    (`FriendlyGroup`, here also an OS error: a data dir that cannot be made, a full disk); a
    native crash (a signal in the engine) prints where it happened."""
    with contextlib.suppress(AttributeError, OSError, ValueError):  # stderr may be no file
        faulthandler.enable()
    run()


def run(args: list[str] | None = None) -> None:
    """The command line on `args` (default: the process's), ending in `SystemExit`; a
    `ScoperagError` or `OSError` ends it with one line on stderr."""
    try:
        cli.main(args=args, prog_name="scoperag" if args is not None else None)
    except OSError as exc:  # e.g. a data dir that cannot be created, or a full disk
        if exc.errno == errno.ENOSPC:
            from scoperag.core.engine.disk_space import disk_full_message

            click.echo(f"Error: {disk_full_message(load_settings().data_dir)}", err=True)
            sys.exit(1)
        where = f" {exc.filename}" if exc.filename else ""
        click.echo(
            f"Error:{where}: {exc.strerror or exc} (check the path given, or SCOPERAG_DATA_DIR)",
            err=True,
        )
        sys.exit(1)
