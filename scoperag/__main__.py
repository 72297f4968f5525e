"""`python -m scoperag`: the same command line as the `scoperag` script."""

from scoperag.server.cli.main import main

main()
