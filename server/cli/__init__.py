"""The `scoperag` command line (`main.cli`), its shared helpers, and one module per command."""
