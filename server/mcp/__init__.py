"""The MCP application: the FastMCP server, how tools are declared, and what every tool shares."""
