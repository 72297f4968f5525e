"""How every tool is declared: parameters from a pydantic model (fixed parameters +
`FilterableField`s), a synchronous handler run in a worker thread (`ModelTool`; an ingestion
reports progress: `ProgressTool`), and the middleware that refuses undeclared arguments."""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import anyio
from fastmcp.exceptions import ToolError
from fastmcp.server.dependencies import get_context
from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.tools import Tool
from pydantic import BaseModel, ValidationError, create_model
from pydantic.json_schema import SkipJsonSchema

from scoperag.core.config.settings import Settings
from scoperag.core.errors import ScoperagError, as_json
from scoperag.core.filters.fields import FilterableField
from scoperag.core.filters.params import StrictParams
from scoperag.server.mcp.errors import tool_errors
from scoperag.server.mcp.ingest_calls import run_with_progress
from scoperag.server.mcp.output_schema import input_schema, output_schema
from scoperag.server.mcp.tool_names import unknown_tool

# MCP tool annotations; an absent hint means readOnly false, destructive TRUE, idempotent false,
# openWorld true, so every tool states all four.
READ_ONLY = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
WRITES = {  # only adds (what it stores has an id of its content: the same call twice adds once)
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
# replaces what was stored (a re-ingested book's old version, a saved position) or deletes it;
# the same call twice changes what one changes
DESTRUCTIVE = {**WRITES, "destructiveHint": True}
# the output schema of a tool whose result is a report without a model of its own
ANY_OBJECT = {"type": "object", "additionalProperties": True}


class NoParams(StrictParams):
    """A tool without parameters."""


def describe_validation_error(error: ValidationError, declared: Iterable[str] = ()) -> str:
    """One line per bad parameter: its name, the value given as JSON (shortened) and what is
    accepted; a required parameter left out is named as missing.

    An undeclared argument is named with the declared parameter it most resembles, if any.
    """
    lines = []
    for item in error.errors():
        name = parameter_name(item["loc"])
        if item["type"] == "extra_forbidden":
            lines.append(unknown_argument(name, declared))
            continue
        if item["type"] == "missing":
            lines.append(f"Missing required argument '{name}'.")
            continue
        given = as_json(item.get("input"))
        rule = item["msg"] if len(item["msg"]) <= 300 else f"{item['msg'][:300]}..."
        lines.append(f"Invalid value for '{name}': {given}. {rule}.")
    return " ".join(lines)


def parameter_name(location: tuple[int | str, ...]) -> str:
    """`a.b.0` for an error's location; characters that cannot be sent escaped."""
    parts = [str(part) for part in location if not _union_member(part)]
    return printable(".".join(parts) or "arguments")


# pydantic's names of the member of a union a value was tried as: `str`, `list[...]`, ...
_BARE_TAGS = {"str", "int", "float", "bool", "list", "dict", "none", "constrained-str"}


def _union_member(part: int | str) -> bool:
    return isinstance(part, str) and (part in _BARE_TAGS or part.endswith("]") and "[" in part)


def printable(text: str) -> str:
    """`text` with what UTF-8 cannot carry (lone surrogates) backslash-escaped."""
    return text.encode("utf-8", errors="backslashreplace").decode("utf-8")


def echo(value: Any) -> Any:
    """A refused value as it can be sent back in JSON: small finite scalars as they are,
    anything else (long, odd or nested) as shortened JSON text."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, str) and len(value) <= 200:
        return printable(value)
    return shorten(value)


def unknown_argument(name: str, declared: Iterable[str]) -> str:
    """'Unknown parameter X (did you mean Y?)', listing the declared parameters."""
    names = sorted(declared)
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    accepted = ", ".join(names) or "none"
    shown = printable(name if len(name) <= 80 else f"{name[:80]}...")
    return f"Unknown parameter '{shown}'.{hint} Accepted parameters: {accepted}."


def shorten(value: Any, most: int = 200) -> str:
    """`value` as JSON, cut to `most` characters so a huge argument is never echoed back."""
    return as_json(value, most)


def params_model(
    name: str, base: type[StrictParams], fields: Iterable[FilterableField]
) -> type[StrictParams]:
    """`base` (the tool's fixed parameters) plus one optional parameter per filter field.

    A filter may not shadow a fixed parameter: that is an error at start-up.
    """
    extra: dict[str, Any] = {}
    for field in fields:
        extra |= field.parameters()
    shadowed = sorted(set(extra) & set(base.model_fields))
    if shadowed:
        raise ScoperagError(
            f"Filter field(s) {shadowed} of {name} shadow the tool's own parameters "
            f"({', '.join(base.model_fields)}); rename them."
        )
    return create_model(name, __base__=base, **extra)


async def in_thread(handler: Callable[..., Any], *args: Any) -> Any:
    """`handler(*args)` in a worker thread (the event loop stays free for other calls)."""
    return await anyio.to_thread.run_sync(handler, *args)


class ModelTool(Tool):
    """A tool validated by a pydantic model and run by a synchronous handler in a thread."""

    params_model: SkipJsonSchema[type[BaseModel]]
    handler: SkipJsonSchema[Callable[..., Any]]

    @classmethod
    def build(
        cls,
        name: str,
        description: str,
        params: type[BaseModel],
        handler: Callable[..., Any],
        result: type[BaseModel] | None,
        annotations: dict[str, bool] = READ_ONLY,
        **fields: Any,
    ) -> ModelTool:
        """`result` None: the handler returns a JSON object described by no model."""
        return cls(
            name=name,
            description=description,
            parameters=input_schema(params),
            output_schema=ANY_OBJECT if result is None else output_schema(result),
            return_type=dict[str, Any] if result is None else result,
            annotations=annotations,
            params_model=params,
            handler=handler,
            **fields,
        )

    def validated(self, arguments: dict[str, Any]) -> BaseModel:
        """The arguments as the parameters model (whose list types read their text forms,
        `scoperag.core.filters.params.as_list`), or a tool error naming each bad one."""
        try:
            return self.params_model.model_validate(arguments)
        except ValidationError as exc:
            declared = self.params_model.model_fields
            raise ToolError(describe_validation_error(exc, declared)) from None

    async def run(self, arguments: dict[str, Any]) -> Any:
        """The handler in a worker thread, inside the MCP error boundary (`tool_errors`: here,
        as FastMCP would prefix the message before any middleware)."""
        params = self.validated(arguments)
        with tool_errors():
            return self.convert_result(await in_thread(self.handler, params))


class ProgressTool(ModelTool):
    """A `ModelTool` whose handler, `handler(params, progress)`, runs under the ingestion caps,
    deadline and cancellation of `run_with_progress`; each progress call notifies the client."""

    settings: SkipJsonSchema[Settings]

    async def run(self, arguments: dict[str, Any]) -> Any:
        work = partial(self.handler, self.validated(arguments))
        with tool_errors():
            return self.convert_result(await run_with_progress(get_context(), work, self.settings))


class StrictArgumentsMiddleware(Middleware):
    """Every tool, however declared, refuses arguments it does not declare and says so in its
    input schema (`additionalProperties: false`); an unknown tool name is refused with the
    close names of the tools there are.

    Looking a tool up walks FastMCP's providers (a tenth of a call's MCP time), so each tool's
    declared parameters are remembered by name once seen: the tool set of a built server is
    fixed. Arguments all among them need no lookup; any other argument is checked against the
    tool as it is now, so a refusal never rests on a remembered list.
    """

    def __init__(self) -> None:
        self._declared: dict[str, frozenset[str]] = {}

    async def on_list_tools(self, context: MiddlewareContext, call_next: Any) -> Any:
        tools = await call_next(context)
        return [_closed(tool) for tool in tools]

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        name, arguments = context.message.name, context.message.arguments or {}
        known = self._declared.get(name)
        if known is not None and known.issuperset(arguments):
            return await call_next(context)
        if context.fastmcp_context is not None:
            server = context.fastmcp_context.fastmcp
            tool = await server.get_tool(name)
            if tool is None:
                listed = await server.list_tools(run_middleware=False)
                raise ToolError(unknown_tool(name, [t.name for t in listed]))
            declared = tool.parameters.get("properties") or {}
            self._declared[name] = frozenset(declared)
            unknown = [key for key in arguments if key not in declared]
            if unknown:
                raise ToolError(" ".join(unknown_argument(key, declared) for key in unknown))
        return await call_next(context)


def _closed(tool: Tool) -> Tool:
    if tool.parameters.get("additionalProperties") is False:
        return tool
    return tool.model_copy(
        update={"parameters": {**tool.parameters, "additionalProperties": False}}
    )


class ScoperagErrorMiddleware(Middleware):
    """Turns errors meant for people into tool errors (calls run concurrently: the engine's
    own operations are locked where needed, see `scoperag.core.engine.sharing.owner`)."""

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        with tool_errors():
            return await call_next(context)
