"""A server's input schema made into one the providers accept, or the reason it cannot be.

The providers want a plain object schema at the root (OpenAI refuses ``anyOf``/``oneOf``
there, neither follows ``$ref``). So: local ``$ref``s are inlined (a recursive or foreign one
makes the tool unusable), a root ``anyOf``/``oneOf``/``allOf`` of object schemas is flattened
into one object, a root without ``type`` but with ``properties`` is an object. Anything else
at the root (an array, a string, not a schema at all) is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["SchemaRefused", "repair_schema"]

_DROPPED_AT_ROOT = ("$schema", "$id", "$defs", "definitions")
_MAX_DEPTH = 64


class SchemaRefused(ValueError):
    """The schema cannot be offered; the message says why (for the log line)."""


def repair_schema(schema: object) -> dict[str, Any]:
    """The schema to send, or :class:`SchemaRefused`."""
    if not isinstance(schema, Mapping):
        raise SchemaRefused("the input schema is not a JSON object")
    defs: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        found = schema.get(key)
        if isinstance(found, Mapping):
            defs.update({f"#/{key}/{name}": value for name, value in found.items()})
    root = _inline(schema, defs, (), 0)
    for key in _DROPPED_AT_ROOT:
        root.pop(key, None)
    root = _flatten_root(root)
    if "type" not in root and "properties" in root:
        root["type"] = "object"
    if root.get("type") != "object":
        raise SchemaRefused(f"the input schema is not an object schema (type {root.get('type')!r})")
    if not isinstance(root.setdefault("properties", {}), Mapping):
        raise SchemaRefused("the input schema's 'properties' is not an object")
    return root


def _inline(node: Any, defs: Mapping[str, Any], seen: tuple[str, ...], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise SchemaRefused("the input schema is nested too deeply")
    if isinstance(node, list):
        return [_inline(item, defs, seen, depth + 1) for item in node]
    if not isinstance(node, Mapping):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in seen:
            raise SchemaRefused(f"the input schema is recursive ({ref})")
        if ref not in defs:
            raise SchemaRefused(f"the input schema refers to {ref!r}, which it does not define")
        target = _inline(defs[ref], defs, (*seen, ref), depth + 1)
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        merged = {**target, **_inline(siblings, defs, seen, depth + 1)} if siblings else target
        return merged
    return {
        key: _inline(value, defs, seen, depth + 1)
        for key, value in node.items()
        if key not in ("$defs", "definitions")
    }


def _flatten_root(root: dict[str, Any]) -> dict[str, Any]:
    for key in ("allOf", "anyOf", "oneOf"):
        variants = root.get(key)
        if not isinstance(variants, list):
            continue
        if not all(isinstance(v, Mapping) and _is_object(v) for v in variants):
            raise SchemaRefused(f"the input schema's root {key} is not of object schemas")
        properties: dict[str, Any] = dict(root.get("properties") or {})
        required_sets: list[set[str]] = []
        for variant in variants:
            properties.update(variant.get("properties") or {})
            required_sets.append(set(variant.get("required") or ()))
        if key == "allOf":
            required = set().union(*required_sets)
        else:  # any one variant may be what the caller meant: only what all of them need
            required = set.intersection(*required_sets) if required_sets else set()
        required |= set(root.get("required") or ())
        rest = {k: v for k, v in root.items() if k not in (key, "properties", "required")}
        root = {**rest, "type": "object", "properties": properties}
        if required:
            root["required"] = sorted(required)
    return root


def _is_object(schema: Mapping[str, Any]) -> bool:
    return bool(schema.get("type", "object") == "object")
