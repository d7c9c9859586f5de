"""The tools' output schemas, published in a shape that is cheaper to validate, the same language.

An MCP client validates every ``structuredContent`` against the tool's ``outputSchema``
(the Python SDK with ``jsonschema``, on every ``call_tool``): for ``audit_answer``'s report
that was two thirds of a call through the SDK's in-memory client (docs/serve.md#benchmark). The
schema pydantic derives names its models in ``$defs`` and writes each optional field as
``anyOf: [X, {"type": "null"}]``; a validator resolves a ``$ref`` and tries the branches of
an ``anyOf`` at each instance. :func:`flattened` rewrites both, exactly:

- a ``{"$ref": "#/$defs/NAME", …}`` whose siblings are annotations only is replaced by the
  definition, the siblings' annotations over the definition's (a ``$ref`` is the schema it
  names; annotations assert nothing);
- ``anyOf: [X, {"type": "null"}]`` (either order) beside annotations only, where ``X`` has one
  ``type`` and otherwise only keywords that apply to that type alone (``properties`` to
  objects, ``items`` to arrays, ``maxLength`` to strings, …) or annotations, becomes ``X`` with
  ``type: [T, "null"]`` (and ``None`` added to an ``enum``): null passed the second branch
  and passes the type; any other instance fails ``{"type": "null"}`` and meets the same
  keywords as in ``X``.

Anything else stays as written. A schema with a ``$ref`` that is not such a local one, or a
definition that refers to itself (directly or not), is returned unchanged, as is one whose
``$defs`` are still referred to after the rewrite. The test
(``tests/pipeline/serve/test_schema_shape.py``) checks that the published and the flattened
schemas accept and reject the same documents, real reports and mutations of them.
"""

from __future__ import annotations

import copy
from typing import Any

ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)
"""Keywords that assert nothing about an instance (JSON Schema 2020-12, meta-data vocabulary)."""

_ONLY_FOR = {
    "object": frozenset(
        {
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
            "dependentRequired",
        }
    ),
    "array": frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems"}),
    "string": frozenset({"minLength", "maxLength", "pattern", "format"}),
    "number": frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    ),
}
_ONLY_FOR["integer"] = _ONLY_FOR["number"]
_ONLY_FOR["boolean"] = frozenset()
_NULL = {"type": "null"}
_VALUES = frozenset({"enum", "const", "default", "examples"})
"""Keywords whose value is instance data, not a schema: never rewritten."""
_DEFS = "#/$defs/"


class _Unchanged(Exception):
    """The schema holds something :func:`flattened` does not rewrite exactly."""


def flattened(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its local ``$ref`` s inlined and its nullable ``anyOf`` s merged (see the
    module), or ``schema`` itself when it holds anything that could not be rewritten exactly."""
    defs = schema.get("$defs", {})
    try:
        body = {k: v for k, v in schema.items() if k != "$defs"}
        flat = _rewrite(copy.deepcopy(body), defs, ())
    except _Unchanged:
        return schema
    return schema if _refers(flat) else flat


def _refers(node: Any) -> bool:
    """Whether a ``$ref`` is left anywhere in ``node`` (a definition that was itself one)."""
    if isinstance(node, dict):
        return "$ref" in node or any(_refers(v) for k, v in node.items() if k not in _VALUES)
    if isinstance(node, list):
        return any(_refers(item) for item in node)
    return False


def _rewrite(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_rewrite(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        node = _inlined(node, defs, seen)
        seen = (*seen, node.pop("$ref-name"))
    node = {
        key: value if key in _VALUES else _rewrite(value, defs, seen) for key, value in node.items()
    }
    return _merged_nullable(node)


def _inlined(node: dict[str, Any], defs: dict[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    """The definition ``node`` refers to, with ``node``'s annotations over it (and its name
    under ``$ref-name`` for the caller to track recursion)."""
    ref = node["$ref"]
    name = ref[len(_DEFS) :] if isinstance(ref, str) and ref.startswith(_DEFS) else None
    siblings = {k: v for k, v in node.items() if k != "$ref"}
    if name is None or name not in defs or "/" in name or "~" in name:
        raise _Unchanged(ref)
    if name in seen or not set(siblings) <= ANNOTATIONS:
        raise _Unchanged(ref)  # recursive, or a $ref beside an assertion
    target = copy.deepcopy(defs[name])
    if not isinstance(target, dict):
        raise _Unchanged(ref)
    return {**target, **siblings, "$ref-name": name}


def _merged_nullable(node: dict[str, Any]) -> dict[str, Any]:
    branches = node.get("anyOf")
    if not isinstance(branches, list) or len(branches) != 2 or _NULL not in branches:
        return node
    other = branches[1] if branches[0] == _NULL else branches[0]
    outer = {k: v for k, v in node.items() if k != "anyOf"}
    if not isinstance(other, dict) or not set(outer) <= ANNOTATIONS:
        return node
    kind = other.get("type")
    allowed = _ONLY_FOR.get(kind) if isinstance(kind, str) else None
    rest = set(other) - {"type", "enum"} - ANNOTATIONS
    if allowed is None or not rest <= allowed:
        return node
    merged = {**other, **outer, "type": [kind, "null"]}
    if "enum" in other:
        enum = other["enum"]
        if not isinstance(enum, list):
            return node
        merged["enum"] = enum if None in enum else [*enum, None]
    return merged


def flatten_tool_schemas(mcp: Any) -> None:
    """Publish every registered tool's output schema :func:`flattened` (the SDK reads
    ``fn_metadata.output_schema`` live, when it lists the tools)."""
    for tool in mcp._tool_manager.list_tools():  # same private handle as arguments.make_strict
        schema = tool.fn_metadata.output_schema
        if schema is not None:
            tool.fn_metadata.output_schema = flattened(schema)
