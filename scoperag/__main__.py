"""`python -m scoperag`: the same command line as the `scoperag` script."""

from scoperag.server.daemon.door import main

main()
