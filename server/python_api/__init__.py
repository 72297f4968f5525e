"""The Python API's machinery: an in-process MCP session, tools as methods, a profile's object."""
