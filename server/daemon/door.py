"""The `scoperag` console script: a door to the data dir's resident engine, importing the
standard library alone. `serve` over stdio relays MCP to it (`relay`); another command runs in
it (`remote_cli`). In this process instead: when asked (`--in-process` first, or
SCOPERAG_IN_PROCESS=1), where no resident engine can serve (a Qdrant server, a read-only data
dir, other settings than the running one's), and for the commands that are servers or manage
the resident engine themselves."""

from __future__ import annotations

import sys

from scoperag.server.daemon import locate

# commands that run here: servers of their own, and the resident engine's own commands
IN_PROCESS_COMMANDS = {"daemon", "ui", "bench", "demo"}


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["--in-process"] or locate.in_process_asked() or not argv:
        in_process(argv)
    command = argv[0]
    try:
        if command == "serve":
            profiles = _stdio_profiles(argv[1:])
            if profiles is not False:
                from scoperag.server.daemon.relay import Relay

                Relay(profiles).run()
                sys.exit(0)
        elif command not in IN_PROCESS_COMMANDS and command.isidentifier():
            from scoperag.server.daemon.remote_cli import run

            sys.exit(run(argv))
    except locate.DaemonUnavailableError:
        pass
    except KeyboardInterrupt:
        sys.exit(130)
    in_process(argv)


def _stdio_profiles(options: list[str]) -> str | None | bool:
    """The `--profiles` of `serve` over stdio (None: not given), or False for anything else
    (HTTP, help, an option this door does not know): that runs in process."""
    profiles: str | None = None
    rest = list(options)
    while rest:
        option = rest.pop(0)
        if option == "--transport" and rest and rest[0] == "stdio":
            rest.pop(0)
        elif option == "--transport=stdio":
            continue
        elif option == "--profiles" and rest:
            profiles = rest.pop(0)
        elif option.startswith("--profiles="):
            profiles = option.partition("=")[2]
        else:
            return False
    return profiles


def in_process(argv: list[str]) -> None:
    """The whole command line, run in this process."""
    from scoperag.server.cli.main import main as whole

    sys.argv = ["scoperag", *argv]
    whole()
    sys.exit(0)
