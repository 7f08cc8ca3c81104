"""Text from the model or a tool, made safe to print on a terminal.

A model (or a file, or a command's output) can contain control characters: ``\\r`` and
``ESC [2K`` rewrite the line a permission prompt shows, other sequences recolour, move the
cursor or set the window title, and bidi overrides reorder what is read. Everything the CLI
prints from such content goes through :func:`one_line` or :func:`block`, which replace each
such character by a visible escape (``\\x1b``, ``\\r``, ``\\u202e``), so what the user reads
is what the text holds.
"""

from __future__ import annotations

import re

__all__ = ["block", "escape_char", "one_line"]

# C0 controls, DEL, C1 controls (``\x9b`` is a one-byte CSI), and the bidi embedding,
# override and isolate characters; tab and newline are handled by the callers' choice.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def escape_char(char: str) -> str:
    """The visible form of one unsafe character: ``\\r``, ``\\x1b``, ``\\u202e``."""
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def block(text: str) -> str:
    """Text shown over several lines (output, a diff, the answer): newlines and tabs kept."""
    return _UNSAFE.sub(lambda match: escape_char(match.group()), text)


def one_line(text: str) -> str:
    """Text shown on one line (a command in a prompt, a tool line): newlines escaped too."""
    return _UNSAFE_LINE.sub(lambda match: escape_char(match.group()), text)
