"""Permission asks as ``session/request_permission`` and the answer back (issue 23 §5).

ACP option kinds are ``allow_once``, ``allow_always``, ``reject_once``, ``reject_always``, and
at most one option of each kind is offered: a client that shows only names and kinds (and
picks "the" always option by a key) must not be able to choose a wider scope than it shows.
So:

- "Allow once" → ``allow_once``;
- ``allow_always`` is our "allow for this session", named with its scope and the exact
  patterns it saves ("Always allow in this session: bash git status *"; ``_meta.lspAgent.scope``
  ``session``). ACP never saves an approval for the whole project: a client cannot show that
  scope (``lsp-agent permissions`` lists and revokes what is saved);
- "Reject" → ``reject_once``; "Reject for this session" → ``reject_always`` (``scope:
  session``): the adapter rejects the same asks of that session without asking again
  (:class:`Rejections`), a reject to the core either way.

The request's ``_meta.lspAgent`` carries the permission, its patterns, what an allow for the
session saves (``always``) and the subject (command, url, patch); the answer's
``_meta.lspAgent.reason`` (on the outcome or the response) is the user's reason for a reject,
which the model reads. A ``cancelled`` outcome, an unknown option, a failed request: the ask
is rejected (``kind=None``, the gate records it cancelled).
"""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionRequest,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from lsp_agent.core.permission.rules import (
    OptionKind,
    PermissionAsk,
    PermissionReply,
    wildcard_match,
)
from lsp_agent.core.permission.rules import PermissionOption as CoreOption
from lsp_agent.core.permission.rules import PermissionRequest as PermissionRequestData
from lsp_agent.core.permission.subjects import subject_detail

META = "lspAgent"
REJECT_FOR_SESSION = "reject_session"
_ACP_KINDS: dict[OptionKind, str] = {
    "allow_once": "allow_once",
    "allow_session": "allow_always",
    "reject_once": "reject_once",
}
"""Ours → ACP's; ``allow_always`` (the project) has no ACP option."""
_SUBJECT_KINDS = {"command": "execute", "edit": "edit", "fetch": "fetch"}
"""The ACP tool kind of an ask, by what it is about (a client may show it as it shows calls)."""
_SCOPES: dict[OptionKind, str] = {
    "allow_once": "once",
    "allow_session": "session",
    "reject_once": "once",
}


def _name(option: CoreOption, request: PermissionRequestData) -> str:
    if option.kind != "allow_session":
        return option.name
    return f"Always allow in this session: {request.permission} {', '.join(request.saves)}"


def acp_options(ask: PermissionAsk) -> list[CoreOption]:
    """The core's options that go to an ACP client: at most one per ACP kind."""
    kept: dict[str, CoreOption] = {}
    for option in ask.options:
        kind = _ACP_KINDS.get(option.kind)
        if kind is not None and kind not in kept:
            kept[kind] = option
    return list(kept.values())


def permission_request(ask: PermissionAsk, *, session_id: str) -> RequestPermissionRequest:
    """``session_id``: the client's session (a subagent's ask is shown in its parent's)."""
    request = ask.request
    options = [
        PermissionOption.model_validate(
            {
                "optionId": option.option_id,
                "name": _name(option, request),
                "kind": _ACP_KINDS[option.kind],
                "_meta": {META: {"scope": _SCOPES[option.kind]}},
            }
        )
        for option in acp_options(ask)
    ]
    options.append(
        PermissionOption.model_validate(
            {
                "optionId": REJECT_FOR_SESSION,
                "name": "Reject for this session",
                "kind": "reject_always",
                "_meta": {META: {"scope": "session"}},
            }
        )
    )
    meta: dict[str, Any] = {
        "permission": request.permission,
        "patterns": list(request.patterns),
        "always": list(request.saves),
        "mode": ask.mode,
    }
    if request.description:
        meta["description"] = request.description
    if request.subject is not None:
        meta["subject"] = request.subject.to_json()
    return RequestPermissionRequest.model_validate(
        {
            "sessionId": session_id,
            "toolCall": _tool_call(ask),
            "options": [o.model_dump(by_alias=True, exclude_none=True) for o in options],
            "_meta": {META: meta},
        }
    )


def _tool_call(ask: PermissionAsk) -> dict[str, Any]:
    request = ask.request
    content: list[dict[str, Any]] = []
    for preview in request.previews:
        if preview.proposed_text is None:
            continue  # a deletion: ACP's diff has no "no new text"; the patch says it
        diff: dict[str, Any] = {
            "type": "diff",
            "path": preview.path,
            "newText": preview.proposed_text,
        }
        if preview.base_text is not None:
            diff["oldText"] = preview.base_text
        content.append(diff)
    detail = subject_detail(request.subject)
    if not content and (detail or request.description):
        text = str(detail or request.description)
        content.append({"type": "content", "content": {"type": "text", "text": text}})
    body: dict[str, Any] = {
        "toolCallId": ask.tool_call_id,
        "title": request.title or request.permission,
        "status": "pending",
    }
    kind = _SUBJECT_KINDS.get(request.subject.type) if request.subject is not None else None
    if kind is not None:
        body["kind"] = kind
    if content:
        body["content"] = content
    locations = [{"path": preview.path} for preview in request.previews]
    if locations:
        body["locations"] = locations
    return ToolCallUpdate.model_validate(body).model_dump(by_alias=True, exclude_none=True)


def permission_reply(ask: PermissionAsk, answer: RequestPermissionResponse) -> PermissionReply:
    outcome = answer.outcome
    if not isinstance(outcome, AllowedOutcome):
        return PermissionReply(kind=None)
    reason = _reason(outcome.field_meta) or _reason(answer.field_meta)
    if outcome.option_id == REJECT_FOR_SESSION:
        return PermissionReply(kind="reject_once", reason=reason)
    chosen = next((o for o in acp_options(ask) if o.option_id == outcome.option_id), None)
    if chosen is None:  # an option we did not offer is a reject
        return PermissionReply(kind="reject_once", reason=reason)
    return PermissionReply(
        kind=chosen.kind, reason=reason if chosen.kind == "reject_once" else None
    )


def _reason(meta: dict[str, Any] | None) -> str | None:
    ours = (meta or {}).get(META)
    reason = ours.get("reason") if isinstance(ours, dict) else None
    return (reason.strip() or None) if isinstance(reason, str) else None


class Rejections:
    """ "Reject for this session" answers, so the same asks of that session are rejected
    without asking again (in this process; an "allow" is saved by the core instead)."""

    def __init__(self) -> None:
        self._rejected: dict[str, list[tuple[str, tuple[str, ...]]]] = {}

    def add(self, ask: PermissionAsk) -> None:
        entry = (ask.request.permission, ask.request.always)
        self._rejected.setdefault(ask.session_id, []).append(entry)

    def covers(self, ask: PermissionAsk) -> bool:
        request = ask.request
        for permission, patterns in self._rejected.get(ask.session_id, []):
            if permission == request.permission and all(
                any(wildcard_match(p, rejected) for rejected in patterns) for p in request.patterns
            ):
                return True
        return False

    def forget(self, session_id: str) -> None:
        self._rejected.pop(session_id, None)


def rejects_for_session(answer: RequestPermissionResponse) -> bool:
    outcome = answer.outcome
    return isinstance(outcome, AllowedOutcome) and outcome.option_id == REJECT_FOR_SESSION
