"""`python -m scoperag.server.daemon`: the resident engine of SCOPERAG_DATA_DIR, in the
foreground (how a door starts it, detached, its output in the data dir's `daemon.log`)."""

from scoperag.server.daemon.resident import main

main()
