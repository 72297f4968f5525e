"""`scoperag search PROFILE QUERY [--filter VALUE ...]` and `scoperag call TOOL key=value ...`.

Both call the MCP tools themselves through FastMCP's in-memory client, so parameters, checks,
errors and results are the tools' own; `search`'s options are read from the input schema of the
profile's search tool, never restated here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from typing import TYPE_CHECKING, Any

import click

from scoperag.server.cli.profile_args import profile_collections
from scoperag.server.cli.support import load_settings
from scoperag.server.cli.tool_arguments import parse_arguments, parse_values, schema_types
from scoperag.server.mcp.tool_names import close_names
from scoperag.server.profiles import declarations, names, resolve_profile

if TYPE_CHECKING:
    from mcp.types import Tool

    from scoperag.server.runtime import Runtime


def _runtime(profiles: list[str] | None = None) -> Runtime:
    from scoperag.server.runtime import Runtime

    settings = load_settings()
    if profiles is not None:
        settings = settings.model_copy(update={"profiles": profiles})
    return Runtime(settings)


async def _tools(runtime: Runtime) -> list[Tool]:
    from fastmcp import Client

    from scoperag.server.mcp.app import build_server

    async with Client(build_server(runtime)) as client:
        return await client.list_tools()


async def _call(runtime: Runtime, tool: str, arguments: dict[str, Any]) -> Any:
    from fastmcp import Client

    from scoperag.server.mcp.app import build_server

    async with Client(build_server(runtime)) as client:
        return await client.call_tool(tool, arguments, raise_on_error=False)


def run_tool(
    runtime: Runtime,
    tool: str,
    arguments: dict[str, Any],
    as_json: bool,
    listing: bool = False,
    explain: bool = False,
) -> None:
    """Call `tool` and print its structured result as TOON, or with `listing` as blocks a
    person reads, or with `as_json` as JSON; `explain`: the
    explain figures follow the hits as tables (`server.results.explain_table`). A tool error ends
    the command with the tool's message and exit status 1."""
    # the message goes to the user once, not also as the server's log line
    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
    try:
        result = asyncio.run(_call(runtime, tool, arguments))
    finally:
        runtime.close()
    text = "\n".join(block.text for block in result.content if hasattr(block, "text"))
    if result.is_error:
        raise click.ClickException(text)
    data = result.structured_content
    if data is None:
        click.echo(text)
    elif as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        from scoperag.server.results.explain_table import render_explain
        from scoperag.server.results.hits import without_explain

        if listing:
            from scoperag.server.results.listing import render_hits

            click.echo(render_hits(tool, data, shutil.get_terminal_size().columns))
        else:
            import toons

            click.echo(toons.dumps(_present(without_explain(tool, data) if explain else data)))
        if explain:
            click.echo("\n" + render_explain(tool, data))


def _present(data: Any) -> Any:
    """`data` without the fields left empty (null), as the tools' own TOON text leaves them."""
    if isinstance(data, dict):
        return {key: _present(value) for key, value in data.items() if value is not None}
    if isinstance(data, list):
        return [_present(item) for item in data]
    return data


def _read_only(tool: Tool) -> bool:
    return tool.annotations is not None and bool(tool.annotations.read_only_hint)


def search_tool(tools: list[Tool]) -> Tool:
    """A profile's search: its read-only tool that takes a `query`."""
    return next(
        tool
        for tool in tools
        if "query" in tool.input_schema.get("properties", {}) and _read_only(tool)
    )


def _metavar(schema: dict[str, Any]) -> str:
    """What an option takes, from its schema: `INTEGER`, `STRING|ARRAY`, ..."""
    kinds = sorted(schema_types(schema) - {"null", "number"} or schema_types(schema))
    return "|".join(kind.upper() for kind in kinds) or "VALUE"


def _option_help(name: str, schema: dict[str, Any], required: bool) -> str:
    text = schema.get("description", "")
    choices = schema.get("enum") or next(
        (m["enum"] for m in schema.get("anyOf", []) if "enum" in m), None
    )
    if choices:
        text += f" One of: {', '.join(map(str, choices))}."
    if "array" in schema_types(schema):
        text += " Repeat the option for several values, or give a JSON list."
    return text + (" Required." if required else "")


def _tool_command(runtime: Runtime, tool: Tool, command: str, profile: str) -> click.Command:
    """`search COMMAND QUERY` calling `tool` of `profile`: its `query` (or `name`) parameter is
    the argument, each other parameter an option; its hits printed as `listing` shows them."""
    properties: dict[str, Any] = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", []))
    positional = next((name for name in ("query", "name") if name in properties), None)
    options = {
        name: schema
        for name, schema in properties.items()
        if name not in (positional, "explain")  # a flag, not a value
    }
    params: list[click.Parameter] = []
    if positional:
        params.append(click.Argument([positional], required=positional in required))
    params += [
        click.Option(
            ["--" + name.replace("_", "-"), name],
            multiple=True,
            metavar=_metavar(schema),
            help=_option_help(name, schema, name in required),
        )
        for name, schema in options.items()
    ]
    params.append(
        click.Option(["--json", "as_json"], is_flag=True, help="Print the tool's result as JSON.")
    )
    if "explain" in properties:
        explain_help = "Per hit: rank, fused, dense (rank), BM25 (rank); then the filter and drops."
        params.append(click.Option(["--explain"], is_flag=True, help=explain_help))

    def callback(as_json: bool, explain: bool = False, **given: Any) -> None:
        value = given.pop(positional) if positional else None
        arguments: dict[str, Any] = {} if value is None else {positional: value}
        if explain:
            arguments["explain"] = True
        for name, texts in given.items():
            if texts:
                arguments[name] = parse_values(list(texts), options[name])
        run_tool(runtime, tool.name, arguments, as_json, listing=True, explain=explain)

    return click.Command(
        command,
        params=params,
        callback=callback,
        help=f"{tool.name}: {tool.description}",
        short_help=f"Search with {tool.name}.",
    )


class SearchGroup(click.Group):
    """One subcommand per profile, built from its search tool's schema when it is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [profile.name for profile in declarations(load_settings().profiles)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A profile (by any spelling) runs its search; a read-only tool's name, that tool."""
        profile = resolve_profile(cmd_name, profile_collections())
        if profile is not None:
            runtime = _runtime([profile])
            tool = search_tool(asyncio.run(_tools(runtime)))
            return _tool_command(runtime, tool, cmd_name, profile)
        runtime = _runtime()
        tools = {t.name: t for t in asyncio.run(_tools(runtime)) if _read_only(t)}
        if cmd_name in tools:
            owner = (p.name for p in declarations() if cmd_name in p.methods.values())
            return _tool_command(runtime, tools[cmd_name], cmd_name, next(owner, ""))
        close = close_names(cmd_name, [*names(), *tools], most=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise click.UsageError(
            f"{cmd_name!r} is neither a profile ({', '.join(names())}) nor a read-only tool "
            f"({', '.join(sorted(tools))}).{hint}",
            ctx,
        )


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add `search` and `call`."""

    @cli.group(cls=SearchGroup)
    def search() -> None:
        """Search a profile: `scoperag search PROFILE QUERY [--FILTER VALUE ...]`.

        The options are the profile's search tool's parameters (`scoperag search pdf --help`
        lists them); values are read as JSON where they parse (5, true, ["a","b"]), else as text.
        Any read-only tool runs the same way by its name, its `query` or `name` the argument:
        `scoperag search lookup_spell fireball --level 3` (`scoperag tools` lists them).
        """

    @cli.command(context_settings={"ignore_unknown_options": True})
    @click.argument("tool")
    @click.argument("pairs", nargs=-1, metavar="KEY=VALUE...")
    @click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
    def call(tool: str, pairs: tuple[str, ...], as_json: bool) -> None:
        """Call any tool of the enabled profiles: `scoperag call lookup_spell name=fireball`.

        Values are read as JSON where they parse (5, true, ["a","b"]), else as text; a list
        parameter may be given several times. `scoperag tools` lists the tools and parameters.
        """
        from scoperag.server.mcp.tool_names import unknown_tool

        runtime = _runtime()
        tools = {t.name: t for t in asyncio.run(_tools(runtime))}
        if tool not in tools:
            runtime.close()
            raise click.ClickException(unknown_tool(tool, tools))
        run_tool(runtime, tool, parse_arguments(pairs, tools[tool]), as_json)

    @cli.command("tools")
    @click.option("--json", "as_json", is_flag=True, help="Print the tools' schemas as JSON.")
    def tools_command(as_json: bool) -> None:
        """List the tools of the enabled profiles with their parameters (for `scoperag call`)."""
        runtime = _runtime()
        try:
            tools = asyncio.run(_tools(runtime))
        finally:
            runtime.close()
        if as_json:
            shown = [t.model_dump(mode="json", exclude_none=True) for t in tools]
            click.echo(json.dumps(shown, indent=2))
            return
        for tool in tools:
            properties = tool.input_schema.get("properties", {})
            required = set(tool.input_schema.get("required", []))
            names = [f"{n}{'' if n in required else '?'}" for n in properties]
            click.echo(f"{tool.name} {' '.join(names)}")
