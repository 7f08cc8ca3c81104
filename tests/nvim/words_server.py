"""A tiny language server for the Neovim tests (pygls, stdio): the references of a word are
its whole-word occurrences in the workspace's ``*.py`` files (open documents as the editor has
them), and the workspace symbols are their ``def`` / ``class`` names. It is the "other"
language server the plugin asks on the agent's behalf (``agent/editor/query``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

server = LanguageServer("words-test-server", "0.1")
DEFINITION = re.compile(r"^\s*(def|class)\s+([A-Za-z_]\w*)", re.MULTILINE)


def _texts(ls: LanguageServer) -> dict[str, str]:
    """Every ``*.py`` file of the workspace by uri, the open documents' own text first."""
    texts: dict[str, str] = {}
    root = ls.workspace.root_path
    if root:
        for path in sorted(Path(root).rglob("*.py")):
            uri = from_fs_path(str(path))
            if uri is not None:
                texts[uri] = path.read_text()
    for uri, document in ls.workspace.text_documents.items():
        texts[uri] = document.source
    return texts


def _word_at(text: str, position: types.Position) -> str:
    lines = text.splitlines()
    if position.line >= len(lines):
        return ""
    line = lines[position.line]
    for match in re.finditer(r"\w+", line):
        if match.start() <= position.character <= match.end():
            return match.group()
    return ""


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
def references(ls: LanguageServer, params: types.ReferenceParams) -> list[types.Location]:
    uri = params.text_document.uri
    text = _texts(ls).get(uri)
    if text is None:
        path = to_fs_path(uri)
        text = Path(path).read_text() if path else ""
    word = _word_at(text, params.position)
    if not word:
        return []
    found: list[types.Location] = []
    for file_uri, file_text in _texts(ls).items():
        for number, line in enumerate(file_text.splitlines()):
            for match in re.finditer(rf"\b{re.escape(word)}\b", line):
                start = types.Position(line=number, character=match.start())
                end = types.Position(line=number, character=match.end())
                found.append(types.Location(uri=file_uri, range=types.Range(start=start, end=end)))
    return found


@server.feature(types.WORKSPACE_SYMBOL)
def workspace_symbols(
    ls: LanguageServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation]:
    symbols: list[types.SymbolInformation] = []
    for uri, text in _texts(ls).items():
        for match in DEFINITION.finditer(text):
            name = match.group(2)
            if params.query.lower() not in name.lower():
                continue
            line = text.count("\n", 0, match.start(2))
            column = match.start(2) - (text.rfind("\n", 0, match.start(2)) + 1)
            start = types.Position(line=line, character=column)
            end = types.Position(line=line, character=column + len(name))
            is_class = match.group(1) == "class"
            kind = types.SymbolKind.Class if is_class else types.SymbolKind.Function
            symbols.append(
                types.SymbolInformation(
                    name=name,
                    kind=kind,
                    location=types.Location(uri=uri, range=types.Range(start=start, end=end)),
                )
            )
    return symbols


if __name__ == "__main__":
    sys.exit(server.start_io())
