"""A scripted language server for the Neovim completion tests (pygls, stdio), standing in for
``lsp-agent serve``'s issue-36 side: it offers ``inlineCompletionProvider`` and answers
``textDocument/inlineCompletion`` and ``agent/nextEdit`` from a JSON script
(``python completion_server.py SCRIPT``), so the plugin's own rules — debounce,
cancellation, stale answers, keys, feedback — are tested apart from any model. What it
received is what the test reads from ``tests/support/lsp_tap.py``'s log.

The script: ``{"inline": [{"after": "...", "insertText": "...", "delay": 0.0, "range": bool,
"id": "..."}], "next_edit": [{"when": "...", "id": "...", "range": Range, "newText": "...",
"reason": "..."}]}``. An inline entry answers when the line before the cursor ends with
``after`` (``range``: the item's range runs from the line's start, its text repeating what is
typed); a next-edit entry when the document contains ``when`` and the entry has not been
answered yet.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("completion-test-server", "0.1")
SCRIPT: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text()) if len(sys.argv) > 1 else {}
ANSWERED: set[str] = set()


@server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
async def inline_completion(
    ls: LanguageServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    document = ls.workspace.get_text_document(params.text_document.uri)
    lines = document.source.split("\n")
    line = lines[params.position.line] if params.position.line < len(lines) else ""
    before = line[: params.position.character]
    for entry in SCRIPT.get("inline", []):
        if not before.endswith(entry["after"]):
            continue
        await asyncio.sleep(entry.get("delay", 0.0))
        text = entry["insertText"]
        item_range = None
        if entry.get("range"):
            text = before + text
            item_range = types.Range(
                start=types.Position(line=params.position.line, character=0),
                end=params.position,
            )
        command = None
        if "id" in entry:
            command = types.Command(
                title="accepted",
                command="lsp-agent.inlineCompletionAccepted",
                arguments=[entry["id"]],
            )
        item = types.InlineCompletionItem(insert_text=text, range=item_range, command=command)
        return types.InlineCompletionList(items=[item])
    return types.InlineCompletionList(items=[])


@server.feature("agent/nextEdit")
async def next_edit(ls: LanguageServer, params: Any) -> dict[str, Any] | None:
    document = ls.workspace.get_text_document(params.textDocument.uri)
    for entry in SCRIPT.get("next_edit", []):
        if entry["when"] in document.source and entry["id"] not in ANSWERED:
            await asyncio.sleep(entry.get("delay", 0.0))
            ANSWERED.add(entry["id"])
            return {
                "id": entry["id"],
                "uri": params.textDocument.uri,
                "range": entry["range"],
                "newText": entry["newText"],
                "reason": entry.get("reason", ""),
            }
    return None


@server.feature("agent/nextEdit/feedback")
def feedback(ls: LanguageServer, params: Any) -> None:
    """Recorded by the tap; nothing to do here."""


if __name__ == "__main__":
    sys.exit(server.start_io())
