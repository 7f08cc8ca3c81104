"""The editor's open documents, found by the real path the tools use.

pygls keeps each open document's text and version (incremental sync applied). Tools speak
in resolved paths (symlinks followed); editors in the uris they opened. This index maps one
to the other, and lets an edit wait until the editor's ``didChange`` for it has arrived.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from lsprotocol import types as lsp
from pygls.workspace import TextDocument, Workspace

from lsp_agent.core.uris import file_uri, path_of_uri


def range_json(range_: lsp.Range) -> dict[str, Any]:
    """An LSP range as the JSON the protocol's models read."""
    return {
        "start": {"line": range_.start.line, "character": range_.start.character},
        "end": {"line": range_.end.line, "character": range_.end.character},
    }


def diagnostic_json(diagnostic: lsp.Diagnostic) -> dict[str, Any]:
    """An LSP diagnostic as JSON (``protocol.Diagnostic``'s fields)."""
    data: dict[str, Any] = {"range": range_json(diagnostic.range), "message": diagnostic.message}
    if diagnostic.severity is not None:
        data["severity"] = int(diagnostic.severity)
    if diagnostic.source is not None:
        data["source"] = diagnostic.source
    if diagnostic.code is not None:
        data["code"] = diagnostic.code
    return data


class OpenDocuments:
    def __init__(self) -> None:
        self._uri_by_path: dict[str, str] = {}
        self._waiters: list[asyncio.Future[None]] = []
        self._workspace: Workspace | None = None

    def attach(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def opened(self, uri: str) -> None:
        path = path_of_uri(uri)
        if path is not None:
            self._uri_by_path[os.path.realpath(path)] = uri
        self._notify()

    def closed(self, uri: str) -> None:
        path = path_of_uri(uri)
        if path is not None:
            real = os.path.realpath(path)
            if self._uri_by_path.get(real) == uri:
                del self._uri_by_path[real]
        self._notify()

    def changed(self) -> None:
        self._notify()

    def document(self, path: str) -> TextDocument | None:
        """The open document for a resolved path, or None."""
        uri = self._uri_by_path.get(path)
        workspace = self._workspace
        if uri is None or workspace is None or uri not in workspace.text_documents:
            return None
        document: TextDocument = workspace.text_documents[uri]
        return document

    def open_paths(self) -> list[str]:
        """The resolved paths of the open documents (``file:`` ones)."""
        return list(self._uri_by_path)

    def uri_for(self, path: str) -> str:
        """The uri the editor uses for ``path`` (its own if open, else a ``file:`` uri)."""
        return self._uri_by_path.get(path) or file_uri(path)

    async def wait_for(self, path: str, text: str, timeout: float) -> bool:
        """Wait until the open document at ``path`` holds ``text`` (or is closed)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            document = self.document(path)
            if document is None or document.source == text:
                return True
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append(waiter)
            try:
                await asyncio.wait_for(waiter, remaining)
            except TimeoutError:
                return False
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def _notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
