"""Code actions and ``workspace/executeCommand`` (protocol.md §8).

A diagnostic becomes "Ask agent to fix: ‹message›"; a selection "Ask agent about selection…"
and "Explain with agent". Executing one answers at once with the session id; the turn runs
in the background like any prompt.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

from lsprotocol import types as lsp

from lsp_agent.core.errors import InvalidParams
from lsp_agent.core.uris import path_of_uri
from lsp_agent.lsp import code_review
from lsp_agent.lsp import protocol as p
from lsp_agent.lsp.documents import diagnostic_json, range_json
from lsp_agent.lsp.handlers import require_session, submit_prompt
from lsp_agent.lsp.host import AgentHost
from lsp_agent.workspace.boundary import display_path, holding_folder

MAX_SELECTION_CHARS = 20_000
SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}


# -- code actions ------------------------------------------------------------------------------


def code_actions(host: AgentHost, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """Editors send each server only its own diagnostics (Neovim does): when the request
    carries none, the forwarded ones on the requested lines are offered instead. Actions of
    a kind the request's ``only`` excludes are left out."""
    actions = code_review.review_actions(host, params) + [
        a for a in _all_code_actions(host, params) if not _about_a_finding(a)
    ]
    only = params.context.only
    if not only:
        return actions
    return [a for a in actions if a.kind is not None and any(_of_kind(a.kind, k) for k in only)]


def _about_a_finding(action: lsp.CodeAction) -> bool:
    """A generic fix of a review finding's diagnostic: the finding's own actions replace it."""
    return any(code_review.finding_id_of(d) for d in action.diagnostics or [])


def _of_kind(kind: str, wanted: str) -> bool:
    """``quickfix`` covers ``quickfix`` and ``quickfix.*`` (LSP's hierarchical kinds)."""
    return kind == wanted or kind.startswith(f"{wanted}.") or wanted == ""


def _all_code_actions(host: AgentHost, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    uri = params.text_document.uri
    host.note_code_action_diagnostics(uri, params.range, params.context.diagnostics)
    diagnostics = list(params.context.diagnostics) or host.editor.diagnostics_at(uri, params.range)
    if params.range.start == params.range.end:
        return _cursor_actions(host, uri, params, diagnostics)
    actions = [_fix_action(uri, diagnostic) for diagnostic in diagnostics]
    argument = {"uri": uri, "range": range_json(params.range)}
    for title, command in (
        ("Ask agent about selection…", "lspAgent.ask"),
        ("Explain with agent", "lspAgent.explain"),
    ):
        actions.append(
            lsp.CodeAction(
                title=title,
                kind=lsp.CodeActionKind.RefactorRewrite,
                command=lsp.Command(title=title, command=command, arguments=[argument]),
            )
        )
    return actions


def _fix_action(uri: str, diagnostic: lsp.Diagnostic) -> lsp.CodeAction:
    title = f"Ask agent to fix: {_one_line(diagnostic.message)}"
    argument = {
        "uri": uri,
        "range": range_json(diagnostic.range),
        "diagnostics": [diagnostic_json(diagnostic)],
    }
    return lsp.CodeAction(
        title=title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        command=lsp.Command(title=title, command="lspAgent.fix", arguments=[argument]),
    )


def _cursor_actions(
    host: AgentHost, uri: str, params: lsp.CodeActionParams, diagnostics: list[lsp.Diagnostic]
) -> list[lsp.CodeAction]:
    """A request at a cursor (an empty range: Emacs lsp-mode, Vim's ALE and vim-lsp send one
    without a selection): the fixes of its line's diagnostics, and when there are none, a
    plain client and the user asked (not a light bulb's automatic request), the line's own
    actions — "Ask agent to fix this line" lets the agent find the problem a linter of
    another tool shows."""
    actions = [_fix_action(uri, diagnostic) for diagnostic in diagnostics]
    automatic = params.context.trigger_kind == lsp.CodeActionTriggerKind.Automatic
    if actions or automatic or host.options is not None:  # front-ends have their own
        return actions
    line = params.range.start.line
    whole = {
        "start": {"line": line, "character": 0},
        "end": {"line": line, "character": _line_length(host, uri, line)},
    }
    argument = {"uri": uri, "range": whole}
    for title, command, kind in (
        ("Ask agent to fix this line", "lspAgent.fix", lsp.CodeActionKind.QuickFix),
        ("Ask agent about this line…", "lspAgent.ask", lsp.CodeActionKind.RefactorRewrite),
        ("Explain with agent", "lspAgent.explain", lsp.CodeActionKind.RefactorRewrite),
    ):
        actions.append(
            lsp.CodeAction(
                title=title,
                kind=kind,
                command=lsp.Command(title=title, command=command, arguments=[argument]),
            )
        )
    return actions


def _line_length(host: AgentHost, uri: str, line: int) -> int:
    """The length of ``line`` in the open document (its last column), 0 when unknown."""
    path = path_of_uri(uri)
    document = host.documents.document(os.path.realpath(path)) if path is not None else None
    lines = document.lines if document is not None else []
    return len(lines[line].rstrip("\r\n")) if line < len(lines) else 0


# -- commands ----------------------------------------------------------------------------------


async def fix(host: AgentHost, target: p.CommandTarget) -> p.CommandStarted:
    where = _where(host, target)
    lines = [f"Fix this problem in {where}:"]
    for diagnostic in target.diagnostics or []:
        severity = SEVERITY.get(diagnostic.severity or 1, "error").upper()
        source = f" [{diagnostic.source}]" if diagnostic.source else ""
        code = f" ({diagnostic.code})" if diagnostic.code is not None else ""
        start = diagnostic.range.start
        lines.append(
            f"{severity}{source} at line {start.line + 1}, column {start.character + 1}: "
            f"{diagnostic.message}{code}"
        )
    if not target.diagnostics:
        lines.append("(the editor reported no diagnostic details)")
    if target.prompt:
        lines.append(target.prompt)
    return await _start(host, target, "\n".join(lines), with_selection=False)


async def explain(host: AgentHost, target: p.CommandTarget) -> p.CommandStarted:
    text = f"Explain the selected code in {_where(host, target)}: what it does and why."
    return await _start(host, target, text, with_selection=True)


async def ask(host: AgentHost, target: p.CommandTarget) -> p.CommandStarted:
    question = target.prompt or "Review the selected code and suggest improvements."
    text = f"{question}\n\n(About the selected code in {_where(host, target)}.)"
    return await _start(host, target, text, with_selection=True)


async def cancel(host: AgentHost, target: p.CommandSession) -> p.EmptyResult:
    await require_session(host, target.session_id)
    await host.turns.cancel(target.session_id)
    return p.EmptyResult()


async def undo(host: AgentHost, target: p.CommandSession) -> p.UndoResult:
    await require_session(host, target.session_id)
    async with host.turns.exclusive(target.session_id, "undoing"):
        message_id, prompt = await host.app.sessions.undo(target.session_id)
    return p.UndoResult(session_id=target.session_id, message_id=message_id, prompt=prompt)


async def redo(host: AgentHost, target: p.CommandSession) -> p.EmptyResult:
    await require_session(host, target.session_id)
    async with host.turns.exclusive(target.session_id, "redoing"):
        await host.app.sessions.revert_clear(target.session_id)
    return p.EmptyResult()


CommandHandler = Callable[[AgentHost, Any], Awaitable[p.Model]]

COMMAND_HANDLERS: dict[str, CommandHandler] = {
    "lspAgent.fix": fix,
    "lspAgent.explain": explain,
    "lspAgent.ask": ask,
    "lspAgent.cancel": cancel,
    "lspAgent.undo": undo,
    "lspAgent.redo": redo,
    "lspAgent.review": code_review.run_review,
    "lspAgent.fixFinding": code_review.fix_finding,
    "lspAgent.dismissFinding": code_review.dismiss_finding,
}


# -- helpers -----------------------------------------------------------------------------------


async def _start(
    host: AgentHost, target: p.CommandTarget, text: str, *, with_selection: bool
) -> p.CommandStarted:
    session_id = target.session_id
    if session_id is None:
        session_id = await host.create_session(_folder_of(host, target.uri))
    info = await require_session(host, session_id)
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    blocks.append({"type": "resource_link", "uri": target.uri, "range": target.range.dump()})
    if with_selection:
        selected = await _selected_text(host, target)
        if selected:
            blocks.append({"type": "resource", "uri": target.uri, "text": selected})
    await submit_prompt(host, info, blocks, client_message_id=None)
    return p.CommandStarted(session_id=session_id)


def _where(host: AgentHost, target: p.CommandTarget) -> str:
    path = display_path(path_of_uri(target.uri) or target.uri, host.workspace_folders())
    start, end = target.range.start, target.range.end
    if start.line == end.line:
        return f"{path} (line {start.line + 1})"
    return f"{path} (lines {start.line + 1}-{end.line + 1})"


def _folder_of(host: AgentHost, uri: str) -> str:
    """The workspace folder holding ``uri`` (the deepest), else the first folder."""
    path = path_of_uri(uri)
    real = os.path.realpath(path) if path is not None else ""
    folder = holding_folder(real, host.workspace_folders())
    if folder is None:
        raise InvalidParams("uri: the client opened no workspace folder")
    return folder


async def _selected_text(host: AgentHost, target: p.CommandTarget) -> str:
    path = path_of_uri(target.uri)
    if path is None:
        return ""
    real = os.path.realpath(path)
    text = await host.editor.open_document_text(real)
    if text is None:
        try:
            text = await asyncio.to_thread(_read_text, real)
        except OSError:
            return ""
    lines = text.splitlines(keepends=True)
    start, end = target.range.start, target.range.end
    chosen = lines[start.line : end.line + 1]
    if not chosen:
        return ""
    if start.line == end.line:
        chosen[0] = chosen[0][start.character : end.character]
    else:
        chosen[0] = chosen[0][start.character :]
        chosen[-1] = chosen[-1][: end.character]
    return "".join(chosen)[:MAX_SELECTION_CHARS]


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read(MAX_SELECTION_CHARS * 4)


def _one_line(message: str, limit: int = 80) -> str:
    line = " ".join(message.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
