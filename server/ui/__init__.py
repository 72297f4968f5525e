"""The web UI (`scoperag ui`, and `/ui` under `scoperag serve --transport http`): server-rendered
pages over the same tools the MCP server has, with a little plain JavaScript from `static/`."""
