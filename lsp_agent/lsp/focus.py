"""A prompt's ``context`` (the user's focus: active file, cursor, selection, diagnostics) as
the "Editor context" block of that user message, and as the core's
:class:`~lsp_agent.core.attachments.PromptFocus` for ``#selection`` and ``#diagnostics``.

The block is part of the prompt's own message, so it never touches the cached prefix. Paths
are shown relative to their workspace folder, positions 1-based; the selected text follows
its range (``a.py:12-18``) in a fenced block, capped at :data:`MAX_SELECTION_CHARS`, and
the whole block passes the secret filter.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from lsp_agent.core.attachments import FocusSelection, PromptFocus, covered_lines
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.core.uris import path_of_uri
from lsp_agent.lsp import protocol as p
from lsp_agent.lsp.editor import core_diagnostic
from lsp_agent.workspace.boundary import display_path

__all__ = ["MAX_SELECTION_CHARS", "context_blocks", "prompt_focus"]

MAX_SELECTION_CHARS = 50_000
"""Selected text shown to the model (``read``'s output cap); the rest is one read away."""


def context_blocks(
    context: p.PromptContext | None, folders: Sequence[str], secrets: SecretFilter
) -> list[dict[str, Any]]:
    """The "Editor context" text block, or none when the context says nothing."""
    if context is None:
        return []
    lines: list[str] = []
    path = _active_path(context)
    shown = display_path(path, folders) if path is not None else None
    if shown is not None:
        lines.append(f"Active file: {shown}")
    if context.cursor is not None:
        cursor = context.cursor
        lines.append(f"Cursor: line {cursor.line + 1}, column {cursor.character + 1}")
    if context.selection is not None:
        first, last = _lines_of(context.selection)
        span = f"{first + 1}" if first == last else f"{first + 1}-{last + 1}"
        lines.append(f"Selection: {shown or 'the active file'}:{span}")
        if context.selected_text:
            lines += _fenced(context.selected_text)
    elif context.selected_text:
        lines += ["Selected text:", *_fenced(context.selected_text)]
    for diagnostic in context.diagnostics or []:
        where = diagnostic.range.start
        source = f" [{diagnostic.source}]" if diagnostic.source else ""
        lines.append(f"Diagnostic at line {where.line + 1}{source}: {diagnostic.message}")
    if not lines:
        return []
    text = secrets.mask("Editor context:\n" + "\n".join(lines)).with_note()
    return [{"type": "text", "text": text}]


def prompt_focus(context: p.PromptContext | None) -> PromptFocus | None:
    """The selection and diagnostics the prompt came with, for its mentions."""
    if context is None:
        return None
    path = _active_path(context)
    selection = None
    if path is not None and context.selection is not None and context.selected_text:
        first, last = _lines_of(context.selection)
        selection = FocusSelection(
            path=path, start_line=first, end_line=last, text=context.selected_text
        )
    diagnostics = {}
    if path is not None and context.diagnostics:
        diagnostics[path] = tuple(core_diagnostic(d) for d in context.diagnostics)
    if selection is None and not diagnostics:
        return None
    return PromptFocus(selection=selection, diagnostics=diagnostics)


def _active_path(context: p.PromptContext) -> str | None:
    document = context.active_document
    uri = None
    if isinstance(document, p.ResourceLinkBlock):
        uri = document.uri
    elif isinstance(document, dict) and isinstance(document.get("uri"), str):
        uri = document["uri"]
    if uri is None:
        return None
    path = path_of_uri(uri)
    return os.path.realpath(path) if path is not None else None


def _lines_of(selection: p.Range) -> tuple[int, int]:
    return covered_lines(selection.start.line, selection.end.line, selection.end.character)


def _fenced(text: str) -> list[str]:
    cut = ""
    if len(text) > MAX_SELECTION_CHARS:
        cut = f"[… {len(text) - MAX_SELECTION_CHARS} more characters of the selection not shown]"
        text = text[:MAX_SELECTION_CHARS]
    fence = "```"
    while fence in text:
        fence += "`"
    return [fence, text.rstrip("\n"), fence, *([cut] if cut else [])]
