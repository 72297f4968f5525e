"""The FastMCP server, the HTTP API and the `scoperag` command line."""
