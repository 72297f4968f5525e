"""`scoperag ui [--port N] [--no-browser]`: the web UI for the data dir, on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from urllib.parse import quote

import click


def has_display() -> bool:
    """A desktop to open a browser on: Windows, macOS, or a DISPLAY/WAYLAND_DISPLAY."""
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add `scoperag ui`."""

    @cli.command()
    @click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
    @click.option("--host", default="127.0.0.1", show_default=True, help="Bind address.")
    @click.option("--no-browser", is_flag=True, help="Print the URL only; open no browser.")
    def ui(port: int, host: str, no_browser: bool) -> None:
        """Serve a web page to browse, search, ingest and keep the store (beside running
        servers). Loopback only unless SCOPERAG_HTTP_TOKEN is set."""
        from scoperag.server.cli.support import load_settings
        from scoperag.server.http.limits import http_server
        from scoperag.server.http.security import is_loopback
        from scoperag.server.runtime import Runtime
        from scoperag.server.ui.app import ui_app

        runtime = Runtime(load_settings())
        token = runtime.settings.http_token
        if not is_loopback(host) and not token:
            raise click.UsageError(
                f"--host {host} is not a loopback address, so anyone who can reach it could use "
                "the UI: set SCOPERAG_HTTP_TOKEN to a secret token, or bind 127.0.0.1."
            )
        app, ctx = ui_app(runtime, host)
        signal.signal(signal.SIGTERM, signal.default_int_handler)

        def ready() -> None:
            shown = f"[{host}]" if ":" in host else host
            url = f"http://{shown}:{port}/ui/"
            if token:
                url = f"{url}login?token={quote(token.get_secret_value())}"
            click.echo(f"scoperag ui: {url} (data dir {runtime.settings.data_dir})", err=True)
            if not no_browser and has_display():
                import webbrowser

                webbrowser.open(url)

        try:
            with contextlib.suppress(KeyboardInterrupt):
                http_server(app, host, port, on_ready=ready).run()
        finally:
            ctx.close()
            runtime.close()
