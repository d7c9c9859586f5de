"""Tool arguments: validated strictly, and refused in one line naming the argument.

The SDK validates a tool's arguments with a pydantic model built from its signature, in lax
mode (``true`` is accepted as the integer 1, ``"5"`` as 5) and reports a failure as pydantic's
multi-line text with a documentation URL. :func:`make_strict` turns every registered tool's
argument model strict (a value of the wrong JSON type is refused, never converted) and closed
(an argument the tool does not take is refused); :func:`argument_problem` words the first
failure as one line — ``Error executing tool TOOL: ARGUMENT must be EXPECTED, got
JSON_TYPE`` (the prefix every tool error has) — which the server
(:class:`pipeline.serve.server.build_server`'s ``call_tool``) returns as the tool's
``isError`` text. The value itself is never echoed (it may be long or carry control
characters): its JSON type is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from pydantic import ValidationError

_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "bool_type": "true or false",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "float_type": "a number",
    "none_required": "null",
}


def json_type(value: Any) -> str:
    """The JSON type of a validated-against value, as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a value of another type"


def _where(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not text:
            text = part
        elif part in _EXPECTED or "[" in part or part.startswith("function-"):
            continue  # a union member's tag (``str``, ``dict[str,any]``): not a place
        else:
            text += f".{part}"
    return text or "the arguments"


def argument_problem(tool: str, error: ValidationError) -> str:
    """One line for the first failure in ``error`` (and how many more there are)."""
    problems = error.errors(include_url=False)
    first = problems[0]
    where = _where(tuple(first["loc"]))
    kind = first["type"]
    if kind == "missing":
        problem = f"argument {where} is required"
    elif kind == "extra_forbidden":
        problem = f"{where} is not an argument of {tool}"
    elif kind in _EXPECTED:
        problem = f"{where} must be {_EXPECTED[kind]}, got {json_type(first['input'])}"
    else:
        problem = f"{where}: {first['msg']}"
    more = len(problems) - 1
    return problem + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def make_strict(mcp: MCPServer) -> None:
    """Make every registered tool's argument model strict and closed (see the module)."""
    for tool in mcp._tool_manager.list_tools():  # pyright: ignore[reportPrivateUsage]
        model = tool.fn_metadata.arg_model
        model.model_config["strict"] = True
        model.model_config["extra"] = "forbid"
        model.model_rebuild(force=True)
