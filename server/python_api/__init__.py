"""The Python API's machinery: tools as methods over a `tool_session`, a profile's object."""
