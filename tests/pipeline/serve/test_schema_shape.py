"""The flattened output schemas accept and reject exactly what the SDK's derived ones do."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from jsonschema.validators import validator_for
from mcp import Client
from referencing import Registry

from pipeline.serve.schema_shape import flattened
from pipeline.serve.server import build_server
from pipeline.serve.service import Served

pytestmark = pytest.mark.anyio

MUTATIONS = 150  # per document; each is validated against both schemas
ODD_VALUES: list[Any] = [None, 0, -1, 1.5, "", "not-a-verdict", True, [], {}, [None], {"x": 1}]


def _validator(schema: dict[str, Any]) -> Any:
    """The validator the SDK's client builds for a tool's output schema."""
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=Registry())


def _nodes(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``doc`` (the root included)."""
    found = [path]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _nodes(value, (*path, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            found += _nodes(value, (*path, i))
    return found


def _mutated(doc: Any, rng: random.Random) -> Any:
    """``doc`` with one change: a node replaced by an odd value, a key dropped or added."""
    doc = copy.deepcopy(doc)
    path = rng.choice(_nodes(doc)[1:])
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    roll = rng.random()
    if roll < 0.2 and isinstance(parent, dict):
        del parent[path[-1]]
    elif roll < 0.3 and isinstance(parent, dict):
        parent["unexpected_key"] = rng.choice(ODD_VALUES)
    else:
        parent[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
    return doc


async def _documents(served: Served) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Per tool: its output schema as the SDK derives it, and real results of it."""
    async with Client(build_server(served, flat_schemas=False), raise_exceptions=True) as client:
        listed = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        found = await client.call_tool("search_literature", {"query": "zentravir", "limit": 3})
        hits = found.structured_content["results"]  # type: ignore[index]
        good, other = hits[0]["handle"], hits[1]["handle"]
        forged = good[:-1] + ("a" if good[-1] != "a" else "b")
        answer = (
            f'Zentravir was studied [{good}] [{other} "no such words"].\n\n'
            f"It was registered [{forged}] [pmid:1-abstract].\n\nAn uncited sentence.\n"
        )
        calls = {
            "search_literature": [{"query": "zentravir", "limit": 3}],
            "audit_answer": [{"answer": answer}, {"answer": answer, "fail_on": ["uncited"]}],
            "resolve_handles": [{"handles": [{"handle": good}, {"handle": forged}]}],
            "fetch_passages": [{"record_ids": [hits[0]["record_id"]]}],
        }
        documents: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
        for tool, arguments in calls.items():
            results = [await client.call_tool(tool, args) for args in arguments]
            assert not any(r.is_error for r in results), results
            schema = listed[tool]
            assert schema is not None
            documents[tool] = (schema, [r.structured_content for r in results])  # type: ignore[misc]
    return documents


async def test_flattened_schemas_judge_every_document_as_the_derived_ones(served: Served) -> None:
    rng = random.Random(17)
    rejected = accepted = 0
    for tool, (schema, results) in (await _documents(served)).items():
        flat = flattened(schema)
        assert flat is not schema and "$ref" not in str(flat), tool  # it was rewritten
        derived, cheaper = _validator(schema), _validator(flat)
        for doc in results:
            assert derived.is_valid(doc) and cheaper.is_valid(doc), tool
            for _ in range(MUTATIONS):
                changed = _mutated(doc, rng)
                verdict = derived.is_valid(changed)
                assert cheaper.is_valid(changed) == verdict, (tool, changed)
                rejected, accepted = rejected + (not verdict), accepted + verdict
    assert rejected > 200 and accepted > 50  # the mutations test both sides of the line


async def test_the_server_publishes_the_flattened_schemas(served: Served) -> None:
    async with Client(build_server(served), raise_exceptions=True) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    schema = tools["audit_answer"].output_schema
    assert schema is not None and "$defs" not in schema and "$ref" not in str(schema)
    verdict = schema["properties"]["sentences"]["items"]["properties"]["citations"]["items"]
    assert verdict["properties"]["similarity"]["type"] == ["number", "null"]


def test_a_ref_is_inlined_under_its_annotations() -> None:
    schema = {
        "$defs": {"Span": {"type": "object", "title": "Span", "required": ["a"]}},
        "properties": {"span": {"$ref": "#/$defs/Span", "description": "where"}},
    }
    assert flattened(schema) == {
        "properties": {
            "span": {"type": "object", "title": "Span", "required": ["a"], "description": "where"}
        }
    }


def test_a_nullable_branch_merges_into_a_type_list_and_its_enum() -> None:
    schema = {
        "anyOf": [{"type": "string", "enum": ["ok", "forged"]}, {"type": "null"}],
        "default": None,
    }
    assert flattened(schema) == {
        "type": ["string", "null"],
        "enum": ["ok", "forged", None],
        "default": None,
    }


@pytest.mark.parametrize(
    "schema",
    [
        {"$defs": {"N": {"properties": {"next": {"$ref": "#/$defs/N"}}}}, "$ref": "#/$defs/N"},
        {"$defs": {"A": {"type": "string"}}, "$ref": "#/$defs/A", "maxLength": 3},
        {"$ref": "https://example.org/schema"},
        {"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"type": "string"}}, "$ref": "#/$defs/A"},
    ],
    ids=["recursive", "ref-beside-an-assertion", "remote-ref", "ref-to-a-ref"],
)
def test_a_schema_it_cannot_rewrite_exactly_is_left_as_it_is(schema: dict[str, Any]) -> None:
    assert flattened(schema) is schema


def test_instance_data_in_a_schema_is_not_read_as_a_schema() -> None:
    schema = {
        "$defs": {"A": {"type": "string"}},
        "properties": {"v": {"enum": [{"$ref": "#/$defs/A"}], "default": {"$ref": "#/$defs/A"}}},
    }
    assert flattened(schema) == {"properties": schema["properties"]}


@pytest.mark.parametrize(
    "branches",
    [
        [{"type": "string", "const": "x"}, {"type": "null"}],  # const applies to every type
        [{"type": "object", "anyOf": [{"required": ["a"]}]}, {"type": "null"}],
        [{"type": "string"}, {"type": "integer"}],
        [{"type": ["string", "integer"]}, {"type": "null"}],
    ],
    ids=["const", "nested-anyOf", "no-null", "type-list"],
)
def test_an_anyof_it_cannot_merge_exactly_stays(branches: list[dict[str, Any]]) -> None:
    schema = {"properties": {"v": {"anyOf": branches}}}
    assert flattened(schema) == schema
