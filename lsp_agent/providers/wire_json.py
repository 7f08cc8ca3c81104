"""Reading the providers' streamed JSON events as plain data.

The translators take each event as the SDK decoded it (``AsyncStream[object]``) instead of
the SDK's models: building a model per event cost ~2 ms of every step, and building their
schemas on first use ~10 ms of the first. Servers differ in what they leave out or send as
null, so every field is read as optional, with the type it must have.
"""

from __future__ import annotations

from typing import Any


def obj(value: object) -> dict[str, Any]:
    """An object field; anything else (missing, null, malformed) reads as empty."""
    return value if isinstance(value, dict) else {}


def items(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def text(value: object) -> str:
    return value if isinstance(value, str) else ""


def count(value: object, default: int = 0) -> int:
    """A token count or an index; ``default`` when it is missing or not an integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default
