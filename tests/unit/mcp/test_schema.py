"""Input schemas the providers would refuse are repaired, or refused with a reason."""

import pytest

from lsp_agent.mcp.schema import SchemaRefused, repair_schema


def test_a_plain_object_schema_passes_through() -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    assert repair_schema(schema) == schema


def test_refs_are_inlined_and_defs_dropped() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"where": {"$ref": "#/$defs/Place", "description": "the place"}},
        "$defs": {"Place": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    }
    assert repair_schema(schema) == {
        "type": "object",
        "properties": {
            "where": {
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "description": "the place",
            }
        },
    }


def test_a_missing_type_or_properties_is_filled_in() -> None:
    assert repair_schema({"properties": {}}) == {"type": "object", "properties": {}}
    assert repair_schema({"type": "object"}) == {"type": "object", "properties": {}}


def test_a_root_any_of_objects_is_flattened() -> None:
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "c"]},
            {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["c"]},
        ]
    }
    assert repair_schema(schema) == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["c"],
    }


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ("not a schema", "not a JSON object"),
        ({"type": "array", "items": {}}, "not an object schema"),
        ({"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}}, "does not define"),
        (
            {
                "type": "object",
                "properties": {"n": {"$ref": "#/$defs/N"}},
                "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
            },
            "recursive",
        ),
        ({"anyOf": [{"type": "string"}, {"type": "object"}]}, "not of object schemas"),
    ],
)
def test_schemas_that_cannot_be_repaired_are_refused(schema: object, why: str) -> None:
    with pytest.raises(SchemaRefused, match=why):
        repair_schema(schema)
