"""A scripted editor for end-to-end tests: pytest-lsp's client driving ``lsp-agent serve``.

It starts the real server as a subprocess, initializes with a real editor's recorded
capabilities (pytest-lsp ships VS Code's and Neovim's), and plays the editor's part of
protocol v1: it keeps its open documents and applies ``workspace/applyEdit`` to them (then
sends ``didChange``, as editors do), answers permission asks and questions from a script,
and records every ``agent/session/update``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types as lsp
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from lsp_agent.core.uris import path_of_uri

UI_ALL = {"chat": True, "diff": True, "permissions": True, "questions": True, "plan": True}

PermissionAnswer = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]] | str

HOLD = "hold"
"""A permission answer that never comes (the dialog stays open until the server cancels)."""


def agent_options(**overrides: Any) -> dict[str, Any]:
    """``initializationOptions.agent`` of a front-end with every UI capability."""
    options: dict[str, Any] = {
        "protocolVersion": 1,
        "ui": dict(UI_ALL),
        "forwardsDiagnostics": True,
        "clientInfo": {"name": "lsp-agent-tests", "version": "1"},
    }
    options.update(overrides)
    return options


def allow_once() -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


def reject(reason: str | None = None) -> dict[str, Any]:
    outcome: dict[str, Any] = {"outcome": "selected", "optionId": "reject_once"}
    if reason is not None:
        outcome["reason"] = reason
    return {"outcome": outcome}


@attrs.define
class Document:
    uri: str
    text: str
    version: int


class AgentClient:
    """The test's view: documents, updates, and scripted answers."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.updates: list[dict[str, Any]] = []
        self.documents: dict[str, Document] = {}
        self.permission_requests: list[dict[str, Any]] = []
        self.permission_answers: list[PermissionAnswer] = []
        self.questions: list[dict[str, Any]] = []
        self.question_answers: list[dict[str, Any]] = []
        self.applied_edits: list[dict[str, Any]] = []
        self.server_capabilities: lsp.ServerCapabilities | None = None
        self.cancelled_requests: list[dict[str, Any]] = []
        """Permission requests the server cancelled (``$/cancelRequest``) while held."""
        self.refuse_edits = False
        self.save_requests: list[dict[str, Any]] = []
        """``agent/documents/save`` requests; each is answered by writing the document's
        text on disk when it is at the asked version (as an editor's save does)."""
        self.unanswered: list[tuple[str, Any]] = []
        """Requests a :meth:`never_answer` method got (they stay unanswered)."""
        self.after_edit: Callable[[Document], None] | None = None
        """Called after an applied edit, like a language server reacting to the change."""
        self._changed = asyncio.Event()
        self._register()

    # -- requests ------------------------------------------------------------------------

    async def request(self, method: str, params: Any, timeout: float = 30.0) -> Any:
        protocol: Any = self.client.protocol
        return await asyncio.wait_for(protocol.send_request_async(method, params), timeout)

    def notify(self, method: str, params: Any) -> None:
        self.client.protocol.notify(method, params)

    async def new_session(self, **params: Any) -> str:
        result = await self.request("agent/session/new", params)
        return str(result["sessionId"])

    async def prompt(self, session_id: str, text: str, **extra: Any) -> dict[str, Any]:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}], **extra}
        result: dict[str, Any] = await self.request("agent/session/prompt", params)
        return result

    # -- updates -------------------------------------------------------------------------

    def session_updates(self, session_id: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u["sessionId"] == session_id]

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30.0
    ) -> dict[str, Any]:
        """The first update (already received or coming) for which ``predicate`` holds."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for update in self.updates[seen:]:
                if predicate(update):
                    return update
            seen = len(self.updates)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                kinds = [u["update"].get("sessionUpdate") for u in self.updates[-20:]]
                raise TimeoutError(f"no matching update; last ones: {kinds}")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(remaining, 0.5))

    async def wait_until(self, condition: Callable[[], bool], timeout: float = 30.0) -> None:
        """Until ``condition`` holds: checked again on every change the client sees (an
        update, a request answered or cancelled), not only on new updates."""
        deadline = time.monotonic() + timeout
        while not condition():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the condition never held")
            self._changed.clear()
            if condition():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(remaining, 0.5))

    async def wait_idle(self, session_id: str, timeout: float = 30.0) -> dict[str, Any]:
        """The ``state_update`` that ended the session's turn."""
        update = await self.wait_for(
            lambda u: (
                u["sessionId"] == session_id
                and u["update"].get("sessionUpdate") == "state_update"
                and u["update"].get("state") == "idle"
            ),
            timeout,
        )
        return dict(update["update"])

    # -- documents -----------------------------------------------------------------------

    def open(self, path: Path, text: str, language_id: str = "python") -> Document:
        document = Document(uri=path.as_uri(), text=text, version=1)
        self.documents[document.uri] = document
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(
                    uri=document.uri, language_id=language_id, version=1, text=text
                )
            )
        )
        return document

    def change(self, path: Path, text: str) -> None:
        """Replace the whole text (the user typing), as an incremental change."""
        document = self.documents[path.as_uri()]
        self._replace(document, _full_range(document.text), text)

    def close(self, path: Path) -> None:
        document = self.documents.pop(path.as_uri())
        self.client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(
                text_document=lsp.TextDocumentIdentifier(uri=document.uri)
            )
        )

    def _replace(self, document: Document, range_: lsp.Range, new_text: str) -> None:
        start = _offset(document.text, range_.start)
        end = _offset(document.text, range_.end)
        document.text = document.text[:start] + new_text + document.text[end:]
        document.version += 1
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(
                    uri=document.uri, version=document.version
                ),
                content_changes=[lsp.TextDocumentContentChangePartial(range=range_, text=new_text)],
            )
        )

    # -- the editor's side -----------------------------------------------------------------

    def _register(self) -> None:
        client: Any = self.client  # pygls' decorators are untyped

        def on_update(params: Any) -> None:
            self.updates.append(params)
            self._changed.set()

        async def on_permission(params: Any) -> Any:
            self.permission_requests.append(params)
            self._changed.set()
            if not self.permission_answers:
                return {"outcome": {"outcome": "cancelled"}}
            answer = self.permission_answers.pop(0)
            if answer == HOLD:  # a dialog nobody answers: until the server cancels it
                try:
                    await asyncio.sleep(3600)
                except asyncio.CancelledError:
                    self.cancelled_requests.append(params)
                    self._changed.set()
                    raise
            return answer(params) if callable(answer) else answer

        def on_question(params: Any) -> Any:
            self.questions.append(params)
            if not self.question_answers:
                return {"outcome": "declined"}
            return self.question_answers.pop(0)

        def on_apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
            return self._apply(params)

        def on_save(params: Any) -> Any:
            self.save_requests.append(params)
            return {"documents": [self._save(d["uri"], d["version"]) for d in params["documents"]]}

        client.feature("agent/documents/save")(on_save)
        client.feature("agent/session/update")(on_update)
        client.feature("agent/session/requestPermission")(on_permission)
        client.feature("agent/session/askQuestion")(on_question)
        client.feature(lsp.WORKSPACE_APPLY_EDIT)(on_apply_edit)

    def never_answer(self, *methods: str) -> None:
        """Leave every request of ``methods`` unanswered, as an editor that answers no
        server request (Vim + ALE); a default handler of the test client is replaced."""
        features = self.client.protocol.fm._features
        client: Any = self.client

        def holder(method: str) -> Callable[[Any], Any]:
            async def hold(params: Any) -> Any:
                self.unanswered.append((method, params))
                self._changed.set()
                await asyncio.sleep(3600)

            return hold

        for method in methods:
            features.pop(method, None)
            client.feature(method)(holder(method))

    def _save(self, uri: str, version: int) -> dict[str, Any]:
        document = self.documents.get(uri)
        if document is None:
            return {"uri": uri, "saved": False, "reason": "not open"}
        if document.version != version:
            return {"uri": uri, "saved": False, "reason": "the buffer changed"}
        path = path_of_uri(uri)
        assert path is not None
        Path(path).write_text(document.text)
        return {"uri": uri, "saved": True, "version": document.version}

    def _apply(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        if self.refuse_edits:
            return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="refused by test")
        edit = params.edit
        for change in edit.document_changes or []:
            if not isinstance(change, lsp.TextDocumentEdit):
                return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="unsupported")
            document = self.documents.get(change.text_document.uri)
            if document is None or change.text_document.version != document.version:
                return lsp.ApplyWorkspaceEditResult(
                    applied=False, failure_reason="document version mismatch"
                )
            self.applied_edits.append(
                {
                    "uri": document.uri,
                    "version": change.text_document.version,
                    "edits": [
                        {
                            "range": e.range,
                            "newText": e.new_text,
                            "annotationId": getattr(e, "annotation_id", None),
                        }
                        for e in change.edits
                        if isinstance(e, (lsp.TextEdit, lsp.AnnotatedTextEdit))
                    ],
                    "annotations": {
                        key: value.needs_confirmation
                        for key, value in (edit.change_annotations or {}).items()
                    },
                }
            )
            text_edits = [
                e for e in change.edits if isinstance(e, (lsp.TextEdit, lsp.AnnotatedTextEdit))
            ]
            for text_edit in sorted(
                text_edits,
                key=lambda e: (e.range.start.line, e.range.start.character),
                reverse=True,
            ):
                self._replace(document, text_edit.range, text_edit.new_text)
        for uri, edits in (edit.changes or {}).items():
            document = self.documents.get(uri)
            if document is None:
                return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="not open")
            self.applied_edits.append(
                {
                    "uri": uri,
                    "version": None,
                    "edits": [{"range": e.range, "newText": e.new_text} for e in edits],
                }
            )
            for text_edit in sorted(
                edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
            ):
                self._replace(document, text_edit.range, text_edit.new_text)
        if self.after_edit is not None:
            for change in edit.document_changes or []:
                if isinstance(change, lsp.TextDocumentEdit):
                    self.after_edit(self.documents[change.text_document.uri])
            for uri in edit.changes or {}:
                self.after_edit(self.documents[uri])
        return lsp.ApplyWorkspaceEditResult(applied=True)

    def publish_diagnostics(self, uri: str, diagnostics: list[dict[str, Any]]) -> None:
        """Forward one document's diagnostics, as a front-end does (``agent/diagnostics``)."""
        self.notify("agent/diagnostics", {"items": [{"uri": uri, "diagnostics": diagnostics}]})

    async def code_actions(
        self,
        path: Path,
        range_: lsp.Range,
        *,
        diagnostics: Sequence[lsp.Diagnostic] = (),
        only: list[str] | None = None,
        trigger: lsp.CodeActionTriggerKind | None = None,
    ) -> Sequence[lsp.Command | lsp.CodeAction] | None:
        """``textDocument/codeAction`` for ``range_`` of ``path``; the raw result."""
        return await self.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=lsp.TextDocumentIdentifier(uri=path.as_uri()),
                range=range_,
                context=lsp.CodeActionContext(
                    diagnostics=list(diagnostics), only=only, trigger_kind=trigger
                ),
            )
        )

    async def execute(self, command: str, argument: dict[str, Any]) -> Any:
        """``workspace/executeCommand`` with one argument; the raw result."""
        return await self.request(
            lsp.WORKSPACE_EXECUTE_COMMAND,
            lsp.ExecuteCommandParams(command=command, arguments=[argument]),
        )


def _offset(text: str, position: lsp.Position) -> int:
    """A UTF-16 position in ``text`` as a code-point offset."""
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: position.line])
    if position.line >= len(lines):
        return len(text)
    line = lines[position.line]
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return offset + index
        units += 2 if ord(char) > 0xFFFF else 1
    return offset + len(line)


def _full_range(text: str) -> lsp.Range:
    lines = text.split("\n")
    last = lines[-1]
    end_char = sum(2 if ord(c) > 0xFFFF else 1 for c in last)
    return lsp.Range(
        start=lsp.Position(line=0, character=0),
        end=lsp.Position(line=len(lines) - 1, character=end_char),
    )


def _plain_converter(client: LanguageClient) -> None:
    """Keep custom params and results as plain dicts (pygls would make namedtuples)."""
    converter = client.protocol._converter

    def keep(obj: dict[str, Any], cls: type[Any]) -> Any:
        return cls(**obj)

    for cls in (JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, keep)

    # lsprotocol takes any object with "title" and "command" for a Command, so a CodeAction
    # that carries a command would come back as a Command with a stringified command.
    def command_or_action(obj: Any, _cls: Any) -> lsp.Command | lsp.CodeAction:
        if isinstance(obj, dict) and isinstance(obj.get("command"), str):
            command: lsp.Command = converter.structure(obj, lsp.Command)
            return command
        action: lsp.CodeAction = converter.structure(obj, lsp.CodeAction)
        return action

    converter.register_structure_hook(lsp.Command | lsp.CodeAction, command_or_action)


@contextlib.asynccontextmanager
async def agent_client(
    *,
    env: Mapping[str, str],
    folders: Sequence[Path],
    capabilities: str | lsp.ClientCapabilities = "visual_studio_code",
    options: dict[str, Any] | None = None,
    plain: bool = False,
    server_command: Sequence[str] | None = None,
) -> AsyncIterator[AgentClient]:
    """A started, initialized client; ``plain`` sends no ``initializationOptions.agent``."""
    command = list(server_command or [sys.executable, "-m", "lsp_agent", "serve"])
    config = ClientServerConfig(server_command=command, server_env=dict(env))
    client = await config.start()
    assert isinstance(client, LanguageClient)
    _plain_converter(client)
    agent = AgentClient(client)
    init_options = None if plain else {"agent": options or agent_options()}
    try:
        initialized = await asyncio.wait_for(
            client.initialize_session(
                lsp.InitializeParams(
                    capabilities=(
                        client_capabilities(capabilities)
                        if isinstance(capabilities, str)
                        else capabilities
                    ),
                    root_uri=folders[0].as_uri() if folders else None,
                    workspace_folders=[
                        lsp.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders
                    ],
                    initialization_options=init_options,
                )
            ),
            60,
        )
        agent.server_capabilities = initialized.capabilities
        yield agent
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 30)
        await _reap(client)


async def _reap(client: LanguageClient) -> None:
    """Make sure the server process has exited and been waited for, and the client stopped.

    ``shutdown_session`` skips all of it after a fatal client error (pytest-lsp then only
    sends SIGTERM) and gives up at its timeout: the unreaped process would outlive the test
    and end it with ``ResourceWarning: subprocess … is still running``.
    """
    process: asyncio.subprocess.Process | None = getattr(client, "_server", None)
    if process is not None and process.returncode is None:
        if process.stdin is not None:
            process.stdin.close()  # end of input: a language server exits
        for stop in (process.terminate, process.kill):
            try:
                await asyncio.wait_for(process.wait(), 10)
                break
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    stop()
        await process.wait()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.stop(), 10)  # type: ignore[no-untyped-call]
