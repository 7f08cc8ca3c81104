"""What a prompt's links and mentions stand for, attached once, when the prompt is admitted.

``@a.py`` arrives as a ``resource_link`` block, ``#diff`` as a ``mention`` block. The
:class:`PromptAttachments` port (``lsp_agent/mentions.py``) reads what they name — the
file's text, the diagnostics, the open buffers, the working tree's diff — and
:meth:`~lsp_agent.core.session.service.SessionService.admit` stores the result in the
``user_message_admitted`` event as ``attachments``. So every later request sends the same
bytes (a file edited afterwards does not rewrite history), and the transcript keeps showing
the link: attachments become parts the model is sent (``core/history.py``) and that
``sessions show``, exports, the search index and the chat leave out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs

from lsp_agent.core.diagnostics import Diagnostic

__all__ = ["AttachScope", "FocusSelection", "PromptAttachments", "PromptFocus", "covered_lines"]


def covered_lines(first: int, last: int, end_character: int) -> tuple[int, int]:
    """The 0-based first and last line an LSP range covers: one that ends at column 0 of a
    later line ends on the line before (a selection of whole lines)."""
    if last > first and end_character == 0:
        last -= 1
    return first, max(first, last)


@attrs.frozen(kw_only=True)
class FocusSelection:
    """The user's selection when the prompt was sent."""

    path: str
    """Absolute."""
    start_line: int
    """0-based, like ``end_line`` (inclusive)."""
    end_line: int
    text: str


@attrs.frozen(kw_only=True)
class PromptFocus:
    """The editor context a prompt came with (for ``#selection`` and ``#diagnostics``)."""

    selection: FocusSelection | None = None
    diagnostics: Mapping[str, tuple[Diagnostic, ...]] = attrs.field(factory=dict)
    """By absolute path: the diagnostics the prompt itself carried."""


@attrs.frozen(kw_only=True)
class AttachScope:
    """Where a prompt's attachments may come from."""

    folder: str
    """The session's folder (``#diff`` runs there)."""
    roots: tuple[str, ...]
    """The workspace wall: nothing outside is attached."""
    focus: PromptFocus | None = None


class PromptAttachments(Protocol):
    async def expand(
        self, content: Sequence[Mapping[str, Any]], scope: AttachScope
    ) -> list[dict[str, Any]]:
        """One ``{"text", "source", "image"?}`` per link or mention of ``content`` that
        names something (``source``: the uri or ``#name``; ``image``: a linked image file's
        ``image`` block, ``text`` its placeholder), in order; never raises for a file that
        cannot be read (its attachment says why)."""
        ...
