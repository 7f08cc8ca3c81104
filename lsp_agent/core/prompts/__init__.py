"""System prompt templates, loaded with importlib.resources.

A mode's system prompt is the shared ``core`` followed by the mode's own sections
(``SECTIONS``), joined by a blank line. The files hold no dates, paths or other per-run text,
so the prompt is the same bytes on every request, across restarts and days (providers cache
the prefix); what varies is the context baseline that follows it (``core/context.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources

SECTIONS: Mapping[str, tuple[str, ...]] = {
    "build": ("core", "build"),
    "plan": ("core", "plan"),
    "general": ("core", "build", "general"),
    "explore": ("core", "explore"),
}
"""The files each mode's system prompt is made of, in order."""

MAX_SYSTEM_CHARS = 10_000
"""The ceiling on a mode's system prompt (tool definitions and the context baseline apart)."""


def load(name: str) -> str:
    return resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")


def system(mode_prompt: str) -> str:
    """The system prompt of ``mode_prompt`` (a key of ``SECTIONS``), from its files."""
    return "\n".join(load(part) for part in SECTIONS[mode_prompt])
