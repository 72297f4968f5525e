"""The resident engine: this process owns the data dir's store and serves, on the store's
socket beside the engine's own operations, MCP sessions (`daemon.mcp`), command lines
(`daemon.cli`), embeddings (`daemon.embed`), `daemon.status` and `daemon.stop`; every Runtime
of the process uses its engine and model (`server.runtime.make_resident`). It stays while a
connection is open and SCOPERAG_DAEMON_IDLE_SECONDS after the last has closed, then hands the
store on and exits."""

from __future__ import annotations

import json
import logging
import os
import signal
import socketserver
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

from scoperag.core.config.settings import Settings
from scoperag.core.engine.sharing import wire
from scoperag.core.engine.sharing.owner import Owner
from scoperag.core.engine.sharing.shared_backend import SharedBackend
from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.server.daemon import locate
from scoperag.server.runtime import Runtime, make_resident

log = logging.getLogger("scoperag.daemon")
IDLE_CHECK_SECONDS = 0.2


class Resident:
    """The open runtime and its owner socket's services, until `stop`."""

    def __init__(self, settings: Settings) -> None:
        self.settings, self.started = settings, time.monotonic()
        self.runtime = Runtime(settings)
        backend = self.runtime.backend  # opens the engine: this process owns the store
        owner = backend.owner if isinstance(backend, SharedBackend) else None
        if owner is None:
            self.runtime.close()
            raise ScoperagError(_not_owner(backend))
        self.owner: Owner = owner
        self.stopping = threading.Event()
        make_resident(self.runtime)
        from scoperag.server.daemon import cli_host, mcp_host

        cli_host.install()
        self.sessions = mcp_host.Sessions(settings)

        owner.services.update(
            {
                "daemon.mcp": lambda h, r: self.sessions.serve(h, r, self.attach),
                "daemon.cli": lambda h, r: cli_host.serve(h, r, self.attach),
                "daemon.embed": self._embed,
                "daemon.status": self._status,
                "daemon.stop": self._stop,
            }
        )
        self.record = {
            "pid": os.getpid(),
            "version": locate.version(),
            "fingerprint": locate.fingerprint(dict(os.environ)),
            "socket": owner.record["socket"],
            "started": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "idle_seconds": settings.daemon_idle_seconds,
            "log": str(settings.data_dir / locate.LOG),
        }
        owner.record["daemon"] = self.record
        temporary = settings.data_dir / f"{locate.RECORD}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(self.record, indent=2))
        os.replace(temporary, settings.data_dir / locate.RECORD)

    def warm_up(self) -> None:
        """Import the tools' handlers and load the model now, not at the first call."""
        from scoperag.server.mcp.warm_up import start_warm_up

        self.runtime.tools_listed.set()
        start_warm_up(self.runtime)
        threading.Thread(target=self.sessions.server, args=({},), daemon=True).start()

    def wait(self) -> None:
        """Until `stop` is asked for, or no connection has been open for the idle time."""
        idle_since: float | None = None
        while not self.stopping.wait(IDLE_CHECK_SECONDS):
            with self.owner.guard:
                busy = bool(self.owner.clients)
            if busy:
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif (
                time.monotonic() - idle_since >= self.settings.daemon_idle_seconds
                and self.owner.leave_if_unused()
            ):
                log.info("idle for %.0f s: exiting", self.settings.daemon_idle_seconds)
                return

    def close(self) -> None:
        """Remove the record (if still ours), then hand the store on."""
        if (locate.read_record(self.settings.data_dir) or {}).get("pid") == os.getpid():
            (self.settings.data_dir / locate.RECORD).unlink(missing_ok=True)
        self.runtime.close()

    def status(self) -> dict[str, Any]:
        with self.owner.guard:
            clients = [
                {"kind": "engine", **about} for about in self.owner.clients.values() if about
            ]
        return {
            **self.record,
            "uptime_seconds": round(time.monotonic() - self.started, 1),
            "clients": clients,
            "model_loaded": self.runtime.embedder.loaded,
        }

    def attach(self, handler: socketserver.StreamRequestHandler, about: dict[str, Any]) -> None:
        """List the connection's process among the clients (`scoperag daemon status`)."""
        keys = ("pid", "command", "kind")
        with self.owner.guard:
            self.owner.clients[handler.request] = {k: about.get(k) for k in keys}

    def _answer(self, handler: socketserver.StreamRequestHandler, request: dict, work: Any) -> None:
        """Answer `request` with `work()`'s result, then serve the connection's next requests."""
        try:
            answer = {"id": request.get("id"), "result": work()}
        except Exception as exc:
            answer = {"id": request.get("id"), "error": wire.error_data(exc)}
        wire.send(handler.wfile, answer)
        while (following := wire.receive(handler.rfile)) is not None:
            service = self.owner.services.get(str(following.get("method")))
            if service is None:
                wire.send(handler.wfile, self.owner.answer(handler.request, following))
            else:
                return service(handler, following)

    def _embed(self, handler: socketserver.StreamRequestHandler, request: dict) -> None:
        """Vectors of `texts` (`query`: one text, embedded as a query is)."""
        params = request.get("params") or {}
        texts = params.get("texts")

        def work() -> list[list[float]]:
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise InvalidParameterError("texts", texts, "a list of strings")
            model = self.runtime.embedder.backend
            if params.get("query") and len(texts) == 1:
                return [model.embed_query(texts[0])]
            return model.embed_texts(texts)

        self.attach(handler, {**params, "kind": "model"})
        return self._answer(handler, request, work)

    def _status(self, handler: socketserver.StreamRequestHandler, request: dict) -> None:
        return self._answer(handler, request, self.status)

    def _stop(self, handler: socketserver.StreamRequestHandler, request: dict) -> None:
        wire.send(handler.wfile, {"id": request.get("id"), "result": {"stopping": os.getpid()}})
        self.stopping.set()


def _not_owner(backend: Any) -> str:
    if getattr(backend, "name", None) == "server":
        return "The store is a Qdrant server: there is no embedded store to hold."
    record = getattr(backend, "_record", None) or {}
    if record:
        return (
            f"The store is owned by pid {record.get('pid')} ({record.get('command')}), not a "
            "resident engine; its callers attach to it meanwhile."
        )
    return "The store is read-only for this user: it is opened in each process that reads it."


def main() -> None:
    """Run the resident engine in the foreground until it is stopped or idle."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
    settings = Settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    try:
        resident = Resident(settings)
    except ScoperagError as exc:
        print(f"scoperag daemon: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: resident.stopping.set())
    log.info("pid %s serves %s (version %s)", os.getpid(), settings.data_dir, locate.version())
    try:
        resident.warm_up()
        resident.wait()
    finally:
        resident.close()
        log.info("stopped")
        logging.shutdown()
    # the store is closed and handed on; the threads still running (a session's reader, the
    # model's pools) are not waited for: native ones abort an interpreter's orderly exit
    os._exit(0)
