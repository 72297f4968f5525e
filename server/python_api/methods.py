"""Python methods made from MCP tools: the tool's parameters as the signature, its description
as the docstring, its result model as the return value."""

from __future__ import annotations

import functools
import inspect
import operator
import os
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Union

from fastmcp.tools import Tool
from pydantic import BaseModel

from scoperag.server.tool_session import ToolCallError


def _declared(tool: Tool) -> list[tuple[str, Any, bool, Any]]:
    """(name, annotation, required, default) of each parameter, as the tool declares them."""
    model = getattr(tool, "params_model", None)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [
            (name, field.annotation, field.is_required(), field.get_default())
            for name, field in model.model_fields.items()
        ]
    properties = tool.parameters.get("properties") or {}
    function = getattr(tool, "fn", None)
    if function is None:  # a tool known by its schema alone
        required = set(tool.parameters.get("required") or ())
        return [
            (name, Any, name in required, schema.get("default"))
            for name, schema in properties.items()
        ]
    parameters = inspect.signature(function).parameters.values()
    return [
        (p.name, p.annotation, p.default is inspect.Parameter.empty, p.default)
        for p in parameters
        if p.name in properties
    ]


def plain_type(annotation: Any) -> Any:
    """`annotation` without pydantic's constraints and validators (`Annotated[...]`), as a
    person reads it: `str | list[str] | None`."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return plain_type(args[0])
    if origin in (Union, types.UnionType):
        members = list(dict.fromkeys(plain_type(arg) for arg in args))
        try:
            return functools.reduce(operator.or_, members)
        except TypeError:  # a member that `|` does not join (e.g. an older typing form)
            return Union[tuple(members)]  # noqa: UP007
    if origin in (list, tuple, dict, set) and args:
        return origin[tuple(plain_type(arg) for arg in args)]
    return annotation


def _parameters_doc(tool: Tool, signature: inspect.Signature) -> str:
    """One line per parameter: its name, plain type, default and the tool's description."""
    properties = tool.parameters.get("properties") or {}
    lines = []
    for name, parameter in signature.parameters.items():
        shown = inspect.formatannotation(parameter.annotation)
        if parameter.default is not inspect.Parameter.empty:
            shown += f", default {parameter.default!r}"
        about = " ".join(str(properties.get(name, {}).get("description", "")).split())
        lines.append(f"    {name} ({shown}){': ' + about if about else ''}")
    return "Parameters:\n" + "\n".join(lines) if lines else ""


def tool_signature(tool: Tool) -> inspect.Signature:
    """The tool's parameters as a Python signature: required ones first, in declared order,
    each with its plain type."""
    declared = _declared(tool)
    ordered = [d for d in declared if d[2]] + [d for d in declared if not d[2]]
    return inspect.Signature(
        [
            inspect.Parameter(
                name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=plain_type(annotation),
                default=inspect.Parameter.empty if required else default,
            )
            for name, annotation, required, default in ordered
        ]
    )


def check_arguments(tool: Tool, arguments: dict[str, Any]) -> None:
    """Refuse, as the tool would, arguments its parameters do not accept (tools declared by
    a parameters model; the others check theirs when called)."""
    from pydantic import ValidationError

    from scoperag.server.mcp.tooling import describe_validation_error

    model = getattr(tool, "params_model", None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return
    try:
        model.model_validate(arguments)
    except ValidationError as exc:
        raise ToolCallError(tool.name, describe_validation_error(exc, model.model_fields)) from None


def _plain(value: Any) -> Any:
    """A value as JSON carries it: a path (or a list of paths) as its string."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def tool_method(
    tool: Tool, name: str, call: Callable[[str, dict[str, Any]], Any]
) -> Callable[..., Any]:
    """A function with the tool's signature that calls it with the arguments given (left-out
    parameters take the tool's defaults) and returns `call`'s answer."""
    signature = tool_signature(tool)

    def method(*args: Any, **kwargs: Any) -> Any:
        arguments = signature.bind(*args, **kwargs).arguments
        return call(tool.name, {key: _plain(value) for key, value in arguments.items()})

    method.__name__ = name
    method.__qualname__ = name
    parameters = _parameters_doc(tool, signature)
    method.__doc__ = f"{tool.description}\n\n{parameters}\n\nCalls the MCP tool `{tool.name}`."
    method.__signature__ = signature  # type: ignore[attr-defined]
    return method
