"""Tools whose parameters come from a pydantic model (fixed parameters + `FilterableField`s)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

import anyio
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.tools import Tool
from pydantic import BaseModel, ValidationError, create_model
from pydantic.json_schema import SkipJsonSchema

from scoperag.core.errors import ScoperagError
from scoperag.core.fields import FilterableField

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}


def describe_validation_error(error: ValidationError) -> str:
    """One line per bad parameter: its name, the value given and what is accepted."""
    lines = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "arguments"
        given = item.get("input")
        lines.append(f"Invalid value for '{name}': {given!r}. {item['msg']}.")
    return " ".join(lines)


def params_model(
    name: str, base: type[BaseModel], fields: Iterable[FilterableField]
) -> type[BaseModel]:
    """`base` (the tool's fixed parameters) plus one optional parameter per filter field."""
    extra: dict[str, Any] = {
        field.name: (field.annotation, ... if field.required else None) for field in fields
    }
    return create_model(name, __base__=base, **extra)


def deferred_service(path: str, *args: Any) -> Callable[[], Any]:
    """`module:Class(*args)`, built on the first call: a profile's handlers and their heavy
    imports (LlamaIndex, qdrant-client, pypdf) stay out of start-up, so `tools/list` is quick."""

    @cache
    def service() -> Any:
        module, _, name = path.partition(":")
        return getattr(importlib.import_module(module), name)(*args)

    return service


class ModelTool(Tool):
    """A tool validated by a pydantic model and run by a synchronous handler in a thread."""

    params_model: SkipJsonSchema[type[BaseModel]]
    handler: SkipJsonSchema[Callable[[Any], Any]]

    @classmethod
    def build(
        cls,
        name: str,
        description: str,
        params: type[BaseModel],
        handler: Callable[[Any], BaseModel],
        result: type[BaseModel],
        read_only: bool = True,
        annotations: dict[str, bool] | None = None,
    ) -> ModelTool:
        schema = params.model_json_schema()
        schema.pop("title", None)
        return cls(
            name=name,
            description=description,
            parameters=schema,
            output_schema=result.model_json_schema(mode="serialization"),
            return_type=result,
            annotations=annotations or (READ_ONLY if read_only else None),
            params_model=params,
            handler=handler,
        )

    async def run(self, arguments: dict[str, Any]) -> Any:
        try:
            params = self.params_model.model_validate(arguments)
        except ValidationError as exc:
            raise ToolError(describe_validation_error(exc)) from None
        try:
            result = await anyio.to_thread.run_sync(self.handler, params)
        except ScoperagError as exc:  # a mounted sub-server would prefix it before the middleware
            raise ToolError(str(exc)) from None
        return self.convert_result(result)


class ScoperagErrorMiddleware(Middleware):
    """Turns errors meant for people into tool errors (calls run concurrently: the engine's
    own operations are locked where needed, see `scoperag.core.engine_ops`)."""

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        try:
            return await call_next(context)
        except ScoperagError as exc:
            raise ToolError(str(exc)) from None
