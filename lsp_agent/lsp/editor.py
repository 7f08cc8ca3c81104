"""The core's ``Editor`` port over LSP (protocol.md §3–§6, §9 for permissions).

- ``publish``: every committed event as one ``agent/session/update`` (see ``stream.py``).
- Open documents are read from the editor's buffer and changed with ``workspace/applyEdit``
  carrying the document version; a changed buffer or a refused edit is a conflict the model
  reads, never a disk write. Right after an applied edit the disk follows (``saving.py``:
  the front-end saves, or the server writes the file) unless the buffer held the user's
  unsaved changes; an editor that cannot take edits gets the file written on disk.
- Every request may time out (``timeouts.py``): an edit is then a conflict, an ask a
  dismissal that ends the turn, and the user sees a ``window/showMessage``.
- Permission asks go to ``agent/session/requestPermission`` with the change set, whose base
  and proposed texts ``agent/diff/get`` serves; an allow may carry ``modifiedContent`` (the
  user's own text per uri), handed on by path. A client without the agent permission UI gets
  ``window/showMessageRequest`` (no answer = deny).
- Questions go to ``agent/session/askQuestion``; a client without that UI declines them.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

import attrs
from lsprotocol import types as lsp
from pydantic import ValidationError
from pygls.workspace import TextDocument

from lsp_agent.core.diagnostics import Diagnostic, DiagnosticsCache
from lsp_agent.core.documents import NOT_OPEN, DocumentEditResult, FilePreview
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.permission.rules import PermissionAsk, PermissionOption, PermissionReply
from lsp_agent.core.permission.subjects import (
    CommandSubject,
    EditSubject,
    FetchSubject,
    subject_detail,
)
from lsp_agent.core.question import Answer, QuestionAsk, QuestionReply
from lsp_agent.core.uris import path_of_uri
from lsp_agent.lsp import protocol as p
from lsp_agent.lsp import saving, timeouts
from lsp_agent.lsp.documents import OpenDocuments, diagnostic_json
from lsp_agent.lsp.review_findings import REVIEW_CODE, SOURCE
from lsp_agent.lsp.stream import UpdateStream
from lsp_agent.workspace.files import link_in_the_way, unified_diff

_log = logging.getLogger(__name__)

APPLY_SETTLE_TIMEOUT = 2.0
"""How long an applied edit waits for the editor's ``didChange`` that reflects it."""
KEPT_CHANGE_SETS = 64
ANNOTATION = "lsp-agent"


class Client(Protocol):
    """What the editor adapter needs from the connection (the server implements it)."""

    def notify(self, method: str, params: dict[str, Any]) -> None: ...

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and return its raw result; cancelling the caller cancels it at
        the client too. Raises on an error response."""
        ...

    @property
    def supports_document_changes(self) -> bool: ...


@attrs.frozen(kw_only=True)
class ChangeSet:
    session_id: str
    files: dict[str, p.DiffGetResult]
    """By uri."""


class ChangeSets:
    """The last few edit proposals, so ``agent/diff/get`` can show them while (and shortly
    after) their permission dialog is open."""

    def __init__(self, keep: int = KEPT_CHANGE_SETS) -> None:
        self._keep = keep
        self._sets: OrderedDict[str, ChangeSet] = OrderedDict()

    def add(self, change_set_id: str, change_set: ChangeSet) -> None:
        self._sets[change_set_id] = change_set
        self._sets.move_to_end(change_set_id)
        while len(self._sets) > self._keep:
            self._sets.popitem(last=False)

    def get(self, session_id: str, change_set_id: str, uri: str) -> p.DiffGetResult | None:
        change_set = self._sets.get(change_set_id)
        if change_set is None or change_set.session_id != session_id:
            return None
        return change_set.files.get(uri)


class LspEditor:
    def __init__(
        self,
        *,
        client: Client,
        documents: OpenDocuments,
        stream: UpdateStream,
        ui: p.UiCapabilities | None,
        change_sets: ChangeSets | None = None,
        forwards_diagnostics: bool = False,
        annotate_edits: bool = False,
        saves_documents: bool = False,
        applies_edits: bool = True,
    ) -> None:
        """``ui`` None: a plain LSP client (no agent UI at all). ``annotate_edits``: mark
        edits with a change annotation that asks the user to confirm (a plain client that
        supports them). ``saves_documents``: the client answers ``agent/documents/save``;
        ``applies_edits`` False: it cannot take ``workspace/applyEdit`` (the disk is
        written instead)."""
        self._client = client
        self._documents = documents
        self._stream = stream
        self._ui = ui
        self.change_sets = change_sets or ChangeSets()
        self._diagnostics = DiagnosticsCache(document_version=self._document_version)
        self._forwards = forwards_diagnostics
        self._annotate = annotate_edits
        self._applies_edits = applies_edits
        self._disk = saving.DiskFollower(
            client.request, documents, saves=saves_documents, tell_user=self.tell_user
        )
        self._stale: dict[str, str] = {}
        """Open documents whose file the server wrote behind the editor's back (it cannot
        take edits): path → the buffer's text then. Until the editor reloads it, the
        buffer is old and the disk is the file's text."""

    def tell_user(self, message: str) -> None:
        """A warning the user sees (``window/showMessage``), for what a tool's result
        alone would hide from them: a request that timed out, a file written behind the
        editor."""
        self._client.notify(
            lsp.WINDOW_SHOW_MESSAGE, {"type": int(lsp.MessageType.Warning), "message": message}
        )

    # -- diagnostics -----------------------------------------------------------------------

    @property
    def diagnostics(self) -> DiagnosticsCache:
        return self._diagnostics

    def _document_version(self, path: str) -> int | None:
        document = self._documents.document(path)
        return None if document is None else document.version

    @property
    def forwards_diagnostics(self) -> bool:
        return self._forwards

    def replace_diagnostics(
        self, uri: str, diagnostics: Sequence[p.Diagnostic], version: int | None = None
    ) -> None:
        """``agent/diagnostics``: the full list for one document, from every server. A list
        for an older version of an open document is stale (it predates an edit) and is
        dropped, so it is never taken for the edit's fresh diagnostics."""
        path = path_of_uri(uri)
        if path is None:
            return
        real = os.path.realpath(path)
        document = self._documents.document(real)
        if version is not None and document is not None and (document.version or 0) > version:
            return
        found = [core_diagnostic(d) for d in diagnostics if not _our_finding(d.source, d.code)]
        self._diagnostics.update(real, found, version)

    def diagnostics_at(self, uri: str, range_: lsp.Range) -> list[lsp.Diagnostic]:
        """The known diagnostics of ``uri`` on the lines of ``range_``, as LSP diagnostics."""
        path = path_of_uri(uri)
        if path is None:
            return []
        first, last = range_.start.line, range_.end.line
        return [
            lsp.Diagnostic(
                range=lsp.Range(
                    start=lsp.Position(line=d.line, character=d.character),
                    end=lsp.Position(line=d.end_line, character=d.end_character),
                ),
                message=d.message,
                severity=lsp.DiagnosticSeverity(d.severity) if d.severity in (1, 2, 3, 4) else None,
                source=d.source,
                code=d.code,
            )
            for d in self._diagnostics.get(os.path.realpath(path))
            if d.line <= last and d.end_line >= first
        ]

    def merge_diagnostics(
        self, uri: str, range_: lsp.Range, diagnostics: Sequence[lsp.Diagnostic]
    ) -> None:
        """Diagnostics seen in a code-action request: they replace what was known inside its
        range (a plain client sends the current ones for that range)."""
        path = path_of_uri(uri)
        if path is None:
            return
        real = os.path.realpath(path)
        first, last = range_.start.line, range_.end.line
        kept = [d for d in self._diagnostics.get(real) if d.end_line < first or d.line > last]
        fresh = [
            core_diagnostic(p.Diagnostic.model_validate(diagnostic_json(d)))
            for d in diagnostics
            if not _our_finding(d.source, d.code)
        ]
        if kept or fresh or self._diagnostics.known(real):
            self._diagnostics.update(real, [*kept, *fresh])

    # -- streaming -------------------------------------------------------------------------

    async def publish(self, event: StoredEvent) -> None:
        await self._stream.publish(event)

    # -- documents -------------------------------------------------------------------------

    async def open_document_text(self, path: str) -> str | None:
        document = self._document(path)
        return None if document is None else document.source

    async def open_documents(self) -> dict[str, str]:
        found = {}
        for path in self._documents.open_paths():
            document = self._document(path)
            if document is not None:
                found[path] = document.source
        return found

    def _document(self, path: str) -> TextDocument | None:
        """The open document at ``path``, unless its buffer is older than the disk (the
        server wrote the file for an editor that cannot take edits, and it has not
        reloaded): then the disk is the file's text."""
        return None if self._is_stale(path) else self._documents.document(path)

    def _is_stale(self, path: str) -> bool:
        document = self._documents.document(path)
        stale = self._stale.get(path)
        if document is None or stale is None:
            return False
        if document.source == stale:
            return True
        del self._stale[path]  # the editor reloaded (or the user typed): the buffer again
        return False

    async def apply_document_edit(
        self, path: str, base_text: str, new_text: str
    ) -> DocumentEditResult:
        if self._is_stale(path):
            return NOT_OPEN
        document = self._documents.document(path)
        if document is None:
            return NOT_OPEN
        if (moved := link_in_the_way(path)) is not None:
            return _conflict(moved)
        if document.source != base_text:
            return _conflict("the document was changed in the editor after the agent read it")
        before = await saving.disk_before(path, base_text)
        if not self._applies_edits:
            return await self._write_for_editor(path, document, new_text, before)
        applied = await self._apply_edit(path, document, base_text, new_text)
        if applied is not None:
            return applied
        return DocumentEditResult(
            status="applied", note=await self._disk.follow(path, new_text, before)
        )

    async def _write_for_editor(
        self, path: str, document: TextDocument, new_text: str, before: saving.DiskCopy
    ) -> DocumentEditResult:
        """An editor that cannot take edits (``workspace.applyEdit`` false): the file is
        written on disk, unless its buffer holds unsaved changes of the user's."""
        if not before.agrees:
            return _conflict(
                "the editor cannot take edits from the server (no workspace/applyEdit) and "
                "the file has unsaved changes in it, so nothing was written; ask the user to "
                "save or close it"
            )
        failed = await saving.write_behind(path, new_text, before)
        if failed:
            return _conflict(failed)
        self._stale[path] = document.source
        self.tell_user(
            f"lsp-agent changed {os.path.basename(path)} on disk (this editor cannot take "
            "edits from the server): reload it to see the change."
        )
        return DocumentEditResult(
            status="applied",
            note=(
                "the editor cannot take edits from the server, so the edit was written to "
                "the file on disk; the editor shows the old text until the user reloads it."
            ),
        )

    async def _apply_edit(
        self, path: str, document: TextDocument, base_text: str, new_text: str
    ) -> DocumentEditResult | None:
        """``workspace/applyEdit`` of the change; None when applied, else the conflict."""
        edit = _minimal_edit(document, base_text, new_text)
        identifier = lsp.OptionalVersionedTextDocumentIdentifier(
            uri=document.uri, version=document.version
        )
        if self._client.supports_document_changes and self._annotate:
            annotated = lsp.AnnotatedTextEdit(
                range=edit.range, new_text=edit.new_text, annotation_id=ANNOTATION
            )
            workspace_edit = lsp.WorkspaceEdit(
                document_changes=[
                    lsp.TextDocumentEdit(text_document=identifier, edits=[annotated])
                ],
                change_annotations={
                    ANNOTATION: lsp.ChangeAnnotation(
                        label="lsp-agent edit",
                        needs_confirmation=True,
                        description="A change proposed by the agent",
                    )
                },
            )
        elif self._client.supports_document_changes:
            workspace_edit = lsp.WorkspaceEdit(
                document_changes=[lsp.TextDocumentEdit(text_document=identifier, edits=[edit])]
            )
        else:
            workspace_edit = lsp.WorkspaceEdit(changes={document.uri: [edit]})
        params = lsp.ApplyWorkspaceEditParams(edit=workspace_edit, label="lsp-agent edit")
        try:
            result = await self._client.request(lsp.WORKSPACE_APPLY_EDIT, params)
        except timeouts.ClientTimeout as timeout:
            self.tell_user(
                f"lsp-agent: the editor did not answer the agent's edit of "
                f"{os.path.basename(path)} within {timeout.waited}; the edit was abandoned."
            )
            return _conflict(
                f"the editor did not answer within {timeout.waited}; the buffer may or may "
                "not show the edit"
            )
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the client answered with an error
            return _conflict(f"the editor could not apply the edit ({error})")
        applied = getattr(result, "applied", None)
        if applied is None and isinstance(result, dict):
            applied = result.get("applied")
        if not applied:
            reason = getattr(result, "failure_reason", None) or getattr(
                result, "failureReason", None
            )
            return _conflict(f"the editor refused the edit{f': {reason}' if reason else ''}")
        if not await self._documents.wait_for(path, new_text, APPLY_SETTLE_TIMEOUT):
            _log.warning("no didChange reflecting the applied edit to %s", path)
        return None

    # -- permission ------------------------------------------------------------------------

    async def request_permission(self, ask: PermissionAsk) -> PermissionReply:
        if self._ui is None or not self._ui.permissions:
            return await self._show_message_request(ask)
        params = self._permission_params(ask)
        try:
            raw = await self._client.request("agent/session/requestPermission", params.dump())
            answer = p.RequestPermissionResult.model_validate(_plain(raw))
        except timeouts.ClientTimeout as timeout:
            return self._unanswered(ask, timeout)
        except asyncio.CancelledError:
            raise
        except (ValidationError, Exception) as error:
            _log.warning("permission request failed or was malformed: %s", error)
            return PermissionReply(kind=None)
        outcome = answer.outcome
        if isinstance(outcome, p.CancelledOutcome):
            return PermissionReply(kind=None)
        chosen = next((o for o in ask.options if o.option_id == outcome.option_id), None)
        if chosen is None:  # an unknown option is a reject
            return PermissionReply(kind="reject_once", reason=outcome.reason)
        if chosen.kind == "reject_once":
            return PermissionReply(kind=chosen.kind, reason=outcome.reason or None)
        return PermissionReply(kind=chosen.kind, modified=_modified(outcome.modified_content))

    def _permission_params(self, ask: PermissionAsk) -> p.RequestPermissionParams:
        request = ask.request
        return p.RequestPermissionParams(
            session_id=ask.session_id,
            tool_call_id=ask.tool_call_id,
            title=request.title or request.permission,
            description=request.description,
            permission=request.permission,
            patterns=list(request.patterns),
            always=list(request.saves),
            subject=self._subject(ask),
            options=[_option(o) for o in ask.options],
        )

    def _subject(
        self, ask: PermissionAsk
    ) -> p.EditSubject | p.CommandSubject | p.FetchSubject | None:
        match ask.request.subject:
            case EditSubject() as edit:
                change_set_id = f"chg_{ask.tool_call_id}"
                self._remember(ask.session_id, change_set_id, ask.request.previews)
                files = [
                    p.FileDiffStat(
                        uri=self._documents.uri_for(entry.path),
                        additions=entry.additions,
                        deletions=entry.deletions,
                    )
                    for entry in edit.files
                ]
                return p.EditSubject(change_set_id=change_set_id, patch=edit.patch, files=files)
            case CommandSubject(command=command, cwd=cwd):
                return p.CommandSubject(command=command, cwd=self._documents.uri_for(cwd))
            case FetchSubject(url=url):
                return p.FetchSubject(url=url)
        return None

    def _remember(
        self, session_id: str, change_set_id: str, previews: Sequence[FilePreview]
    ) -> None:
        files: dict[str, p.DiffGetResult] = {}
        for preview in previews:
            uri = self._documents.uri_for(preview.path)
            files[uri] = p.DiffGetResult(
                uri=uri,
                base_text=preview.base_text or "",
                proposed_text=preview.proposed_text or "",
                patch=unified_diff(preview.base_text, preview.proposed_text, preview.path).patch,
            )
        self.change_sets.add(change_set_id, ChangeSet(session_id=session_id, files=files))

    async def _show_message_request(self, ask: PermissionAsk) -> PermissionReply:
        """A plain client: a message with Allow once / Allow for session / Deny."""
        request = ask.request
        titles = ["Allow once", "Allow for session", "Deny"]
        what = subject_detail(request.subject) or ", ".join(request.patterns)
        title = request.title or request.permission
        # a command's title is the command itself ("Run: rm notes.txt"): not said twice
        message = f"lsp-agent wants to {title}" + ("" if what in title else f": {what}")
        if request.saves:  # the exact patterns "Allow for session" saves
            message += f" (Allow for session saves {request.permission} {', '.join(request.saves)})"
        else:
            titles.remove("Allow for session")
        params = lsp.ShowMessageRequestParams(
            type=lsp.MessageType.Warning,
            message=message,
            actions=[lsp.MessageActionItem(title=title) for title in titles],
        )
        try:
            chosen = await self._client.request(lsp.WINDOW_SHOW_MESSAGE_REQUEST, params)
        except timeouts.ClientTimeout as timeout:
            return self._unanswered(ask, timeout)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            _log.warning("showMessageRequest failed: %s", error)
            chosen = None
        answer = getattr(chosen, "title", None)
        if answer == "Allow once":
            return PermissionReply(kind="allow_once")
        if answer == "Allow for session" and request.saves:
            return PermissionReply(kind="allow_session")
        return PermissionReply(kind="reject_once")

    def _unanswered(self, ask: PermissionAsk, timeout: timeouts.ClientTimeout) -> PermissionReply:
        """Nobody answered the ask in time: the call is not run and the turn ends (a
        dismissed ask), the model reads why and the user is told."""
        what = ask.request.title or ask.request.permission
        self.tell_user(
            f"lsp-agent: the permission request '{what}' got no answer within "
            f"{timeout.waited}; the agent's turn was stopped (editor.ask_timeout)."
        )
        return PermissionReply(
            kind=None,
            reason=(
                f"Nobody answered the permission request within {timeout.waited}, so the "
                "call was not run and the turn ends here."
            ),
        )

    # -- questions -------------------------------------------------------------------------

    async def ask_question(self, ask: QuestionAsk) -> QuestionReply:
        if self._ui is None or not self._ui.questions:
            return QuestionReply(outcome="declined")
        params = {
            "sessionId": ask.session_id,
            "toolCallId": ask.tool_call_id,
            "questions": [q.to_json() for q in ask.questions],
        }
        try:
            raw = await self._client.request("agent/session/askQuestion", params)
            answer = p.AskQuestionResult.model_validate({"result": _plain(raw)}).result
        except timeouts.ClientTimeout as timeout:
            self.tell_user(
                f"lsp-agent: the agent's questions got no answer within {timeout.waited}; "
                "its turn was stopped (editor.ask_timeout)."
            )
            return QuestionReply(
                outcome="cancelled",
                reason=(
                    f"Nobody answered the questions within {timeout.waited}; the turn ends here."
                ),
            )
        except asyncio.CancelledError:
            raise
        except (ValidationError, Exception) as error:
            _log.warning("question request failed or was malformed: %s", error)
            return QuestionReply(outcome="declined")
        if isinstance(answer, p.AnsweredOutcome):
            known = {q.question_id for q in ask.questions}
            answers = {
                qid: Answer(selected=tuple(a.selected), custom=a.custom)
                for qid, a in answer.answers.items()
                if qid in known
            }
            return QuestionReply(outcome="answered", answers=answers)
        if isinstance(answer, p.CancelledOutcome):
            return QuestionReply(outcome="cancelled")
        return QuestionReply(outcome="declined")


def core_diagnostic(d: p.Diagnostic) -> Diagnostic:
    return Diagnostic(
        line=d.range.start.line,
        character=d.range.start.character,
        end_line=d.range.end.line,
        end_character=d.range.end.character,
        message=d.message,
        severity=d.severity,
        source=d.source,
        code=None if d.code is None else str(d.code),
    )


def _modified(content: dict[str, str] | None) -> dict[str, str]:
    """``modifiedContent`` (uri → text) by resolved path, as the ask's previews name files;
    a uri that is no file is dropped (logged). Which files count is the gate's business."""
    by_path: dict[str, str] = {}
    for uri, text in (content or {}).items():
        path = path_of_uri(uri)
        if path is None:
            _log.warning("modified content for %s ignored: not a file uri", uri)
            continue
        by_path[os.path.realpath(path)] = text
    return by_path


def _option(option: PermissionOption) -> p.PermissionOptionModel:
    return p.PermissionOptionModel(option_id=option.option_id, name=option.name, kind=option.kind)


def _conflict(message: str) -> DocumentEditResult:
    return DocumentEditResult(status="conflict", message=message)


def _minimal_edit(document: TextDocument, old: str, new: str) -> lsp.TextEdit:
    """One edit replacing only the changed middle: the cursor and folds elsewhere stay, and
    one undo restores exactly this change. Never splits a CRLF pair."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    if start > 0 and old[start - 1] == "\r":
        start -= 1
    suffix = 0
    while (
        suffix < min(len(old), len(new)) - start
        and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]
    ):
        suffix += 1
    end_old, end_new = len(old) - suffix, len(new) - suffix
    if suffix and end_old > 0 and old[end_old - 1] == "\r" and old[end_old] == "\n":
        end_old, end_new = end_old + 1, end_new + 1
    return lsp.TextEdit(
        range=lsp.Range(
            start=_position(document, old, start), end=_position(document, old, end_old)
        ),
        new_text=new[start:end_new],
    )


def _position(document: TextDocument, text: str, offset: int) -> lsp.Position:
    """``offset`` (code points into ``text``) as an LSP position in the negotiated encoding."""
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    units = document.position_codec.client_num_units(text[line_start:offset])
    return lsp.Position(line=line, character=units)


def _plain(value: Any) -> Any:
    """A client's raw answer as plain JSON values (pygls may hand back attrs objects)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return [_plain(v) for v in value]
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    return value


def plain_json(value: Any) -> Any:
    """A client's raw answer as plain JSON values (for other adapters of client requests)."""
    return _plain(value)


def _our_finding(source: str | None, code: object) -> bool:
    """A finding of the agent's own review (``review_findings.py``), which an editor forwards
    with the rest: not a language server's diagnostic, so not one the model is told of."""
    return source == SOURCE and code == REVIEW_CODE
