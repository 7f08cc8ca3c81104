"""The permission gate: one place where every tool's request is decided.

Configured rules (with the mode's rules after them) decide first; saved approvals ("for this
session", "always" for the project) may then turn an ``ask`` into ``allow``, but never beat a
configured ``deny``. What is still ``ask`` goes to the editor. Every ask and every answer is
an event, so the editor, the log and the audit trail see the same thing. A write to a
protected file (``request.protected``) skips rules and saved approvals: unless denied, it
goes to the person, and whatever they answer is not saved.

An allow may come with the user's own text for files of an ``edit`` ask (they edited the
proposal): the gate keeps only the files the ask proposed a text for and that the user really
changed, hands them to the tool in the verdict, and marks the answer ``modified``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Literal

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.interfaces import Editor, EventStore
from lsp_agent.core.permission.protected import PROTECTED_OPTIONS
from lsp_agent.core.permission.rules import (
    ALLOWED,
    REJECTED_MESSAGE,
    PermissionAsk,
    PermissionReply,
    PermissionRequest,
    PermissionVerdict,
    Rule,
    decide,
    denied_message,
    options_for,
    rejected_with_reason,
)
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.recorder import Recorder

_log = logging.getLogger(__name__)
_ALLOWS = ("allow_once", "allow_session", "allow_always")
_BOM = "\ufeff"


class PermissionGate:
    """Decides the permission requests of one session's turn."""

    def __init__(
        self,
        *,
        session_id: str,
        mode: str,
        store: EventStore,
        editor: Editor,
        recorder: Recorder,
    ) -> None:
        self._session_id = session_id
        self._mode = mode
        self._store = store
        self._editor = editor
        self._rec = recorder
        self.cancelled_while_asking: set[str] = set()
        """Tool calls whose permission ask a cancel cut short: they never started."""

    @property
    def mode(self) -> str:
        """The mode asks are made in; the loop updates it at the start of each step."""
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        self._mode = mode

    async def ask(
        self,
        request: PermissionRequest,
        *,
        rules: Sequence[Rule],
        tool_call_id: str,
        message_id: str,
    ) -> PermissionVerdict:
        """``rules`` were captured when the tool call started: a mode switch never changes
        a call in flight."""
        decision = decide(request.permission, request.patterns, rules, unjudged=request.unjudged)
        if request.unjudged and decision.action != "deny":
            # What cannot be judged may reach any folder: a configured deny of outside
            # folders (``external_directory`` for every path) stays final for it too.
            outside = decide(PermissionKind.EXTERNAL_DIRECTORY, ("*",), rules)
            if outside.action == "deny":
                message = denied_message(PermissionKind.EXTERNAL_DIRECTORY, outside.rules)
                return PermissionVerdict(allowed=False, message=message)
        if request.protected and decision.action != "deny":  # only a person, every time
            return await self._ask_user(attrs.evolve(request, always=()), tool_call_id, message_id)
        if decision.action == "ask":
            # Saved answers are allows only: they can turn an ask into an allow, never change
            # an allow or a deny, so the store is read only when the rules alone would ask.
            saved = await self._store.approvals(self._session_id)
            decision = decide(
                request.permission, request.patterns, rules, saved, unjudged=request.unjudged
            )
        if decision.action == "allow":
            return ALLOWED
        if decision.action == "deny":
            return PermissionVerdict(
                allowed=False, message=denied_message(request.permission, decision.rules)
            )
        return await self._ask_user(request, tool_call_id, message_id)

    async def _ask_user(
        self, request: PermissionRequest, tool_call_id: str, message_id: str
    ) -> PermissionVerdict:
        asked = ev.PermissionAsked(
            tool_call_id=tool_call_id,
            message_id=message_id,
            permission=request.permission,
            patterns=list(request.patterns),
            always=list(request.saves),
            title=request.title,
            description=request.description or None,
            subject=None if request.subject is None else request.subject.to_json(),
        )
        # request.previews (whole file texts) go to the editor with the ask, never into the log.
        # One transaction: the ask is queued and committed with the state change.
        await self._rec.record(asked)
        await self._rec.emit(ev.StateChanged(state="requires_action"))
        ask = PermissionAsk(
            session_id=self._session_id,
            tool_call_id=tool_call_id,
            mode=self._mode,
            request=request,
            options=options_for(request),
        )
        if request.protected:  # once or not at all: nothing to save
            ask = attrs.evolve(ask, options=PROTECTED_OPTIONS)
        try:
            reply = await self._editor.request_permission(ask)
        except asyncio.CancelledError:
            self.cancelled_while_asking.add(tool_call_id)
            await asyncio.shield(self._resolved(asked, PermissionReply(kind=None), request))
            raise
        modified = _user_edits(reply, request)
        await self._resolved(asked, reply, request, modified=bool(modified))
        await self._rec.emit(ev.StateChanged(state="running"))
        return _verdict(reply, modified)

    async def _resolved(
        self,
        asked: ev.PermissionAsked,
        reply: PermissionReply,
        request: PermissionRequest,
        *,
        modified: bool = False,
    ) -> None:
        saves = reply.kind in ("allow_session", "allow_always")
        resolved = ev.PermissionResolved(
            tool_call_id=asked.tool_call_id,
            message_id=asked.message_id,
            permission=asked.permission,
            state=_state(reply),
            option_kind=reply.kind,
            reason=reply.reason or None,
            always=list(request.saves) if saves else None,  # exactly what the options named
            modified=True if modified else None,
        )
        # Committed with the state change that follows (or the turn's end, if cancelled).
        await self._rec.record(resolved)


def _state(reply: PermissionReply) -> Literal["allowed", "rejected", "cancelled"]:
    if reply.kind is None:
        return "cancelled"
    return "rejected" if reply.kind == "reject_once" else "allowed"


def _user_edits(reply: PermissionReply, request: PermissionRequest) -> dict[str, str]:
    """The user's texts an allow carries that the tool is to apply: only for an ``edit``
    ask, only for files it proposed a text for (not one it deletes), only where the text
    differs from the proposal (a BOM and line endings aside). Everything else is logged."""
    if reply.kind not in _ALLOWS or not reply.modified:
        return {}
    if request.permission != "edit":
        _log.warning("modified content ignored: the ask was %s, not edit", request.permission)
        return {}
    proposed = {p.path: p.proposed_text for p in request.previews if p.proposed_text is not None}
    kept: dict[str, str] = {}
    for path, text in reply.modified.items():
        if path not in proposed:
            _log.warning("modified content for %s ignored: the ask proposes no text for it", path)
        elif _comparable(text) != _comparable(proposed[path]):
            kept[path] = text
    return kept


def _comparable(text: str) -> str:
    return text.removeprefix(_BOM).replace("\r\n", "\n")


def _verdict(reply: PermissionReply, modified: dict[str, str]) -> PermissionVerdict:
    if reply.kind in _ALLOWS:
        return PermissionVerdict(allowed=True, modified=modified) if modified else ALLOWED
    if reply.kind is None and reply.reason:
        # Dismissed by the host, not the user (no answer in time): the turn ends, the
        # model reads why.
        return PermissionVerdict(allowed=False, message=reply.reason, stop_turn=True)
    if reply.reason:
        return PermissionVerdict(allowed=False, message=rejected_with_reason(reply.reason))
    return PermissionVerdict(allowed=False, message=REJECTED_MESSAGE, stop_turn=True)
