"""The agent's review of the person's changes over LSP (docs/review.md, "Agent review of your
changes"): ``agent/codeReview/run`` (also the ``lspAgent.review`` command) runs it and
publishes the findings as diagnostics; on such a diagnostic the code actions "Fix with agent"
(``lspAgent.fixFinding``: a prompt naming the finding in the folder's session) and "Dismiss"
(``lspAgent.dismissFinding``: the diagnostic goes away).
"""

from __future__ import annotations

import os
from typing import Any

from lsprotocol import types as lsp

from lsp_agent.code_review.changes import Scope, review_changes
from lsp_agent.code_review.findings import Finding
from lsp_agent.code_review.review import ReviewFailed
from lsp_agent.core.errors import InvalidParams, LspAgentError
from lsp_agent.core.uris import file_uri, path_of_uri
from lsp_agent.lsp import protocol as p
from lsp_agent.lsp.host import AgentHost
from lsp_agent.lsp.review_findings import REVIEW_CODE, SOURCE
from lsp_agent.workspace.boundary import display_path, holding_folder

__all__ = ["ReviewFailedError", "dismiss_finding", "fix_finding", "review_actions", "run_review"]

REVIEW_MODE = "plan"
"""The review runs on the model a ``plan`` session would (``agents.plan.model``): it is
read-only work, like planning."""


class ReviewFailedError(LspAgentError):
    """The review could not run (not a repository, no such revision, the model failed)."""


async def run_review(host: AgentHost, params: p.CodeReviewRunParams) -> p.CodeReviewRunResult:
    folder = host.folder_for(params.workspace_folder)
    if params.staged and params.base:
        raise InvalidParams("staged and base: choose one")
    app = host.app
    provider, model = app.sessions.mode_model(REVIEW_MODE)
    result = await review_changes(
        folder,
        Scope(staged=bool(params.staged), base=params.base),
        provider=provider,
        model=model.model,
        avoid=host.workspace_folders(),
        max_output_tokens=min(8192, model.max_output),
        mask=lambda text: app.secrets.mask(text).with_note(),
    )
    if isinstance(result, ReviewFailed):
        if result.asked_wrong:
            raise InvalidParams(f"nothing to review: {result.reason}")
        raise ReviewFailedError(f"the review could not run: {result.reason}")
    host.findings.replace(result.findings, folder)
    return p.CodeReviewRunResult(
        findings=[_finding(f) for f in result.findings], summary=result.summary
    )


async def fix_finding(host: AgentHost, target: p.FindingTarget) -> p.CommandStarted:
    finding = _require(host, target.finding_id)
    folder = _folder_of(host, finding.path)
    session_id = target.session_id or await host.sessions.latest(folder)
    if session_id is None:
        session_id = await host.create_session(folder)
    info = await host.sessions.require(session_id)
    shown = display_path(finding.path, host.workspace_folders())
    span = (
        f"{finding.line}"
        if finding.end_line == finding.line
        else f"{finding.line}-{finding.end_line}"
    )
    lines = [
        f"Fix this problem your review found in {shown} (line {span}):",
        f"{finding.severity.upper()}: {finding.message}",
    ]
    for related in finding.related:
        where = display_path(related.path, host.workspace_folders())
        lines.append(f"Related: {where}:{related.line}: {related.message}")
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": "\n".join(lines)},
        {
            "type": "resource_link",
            "uri": file_uri(finding.path),
            "range": _range(finding).dump(),
        },
    ]
    host.stream.follow(session_id, await host.sessions.last_seq(session_id))
    await host.runtime.prompts.submit(info, blocks, client_message_id=None)
    return p.CommandStarted(session_id=session_id)


async def dismiss_finding(host: AgentHost, target: p.FindingTarget) -> p.EmptyResult:
    _require(host, target.finding_id)
    host.findings.dismiss(target.finding_id)
    return p.EmptyResult()


def review_actions(host: AgentHost, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """ "Fix with agent" and "Dismiss" for each finding on the request's lines: those the
    request carries (its diagnostics' ``data.findingId``), else the published ones there."""
    uri = params.text_document.uri
    found: dict[str, lsp.Diagnostic | None] = {}
    for diagnostic in params.context.diagnostics:
        finding_id = finding_id_of(diagnostic)
        if finding_id is not None and host.findings.get(finding_id) is not None:
            found[finding_id] = diagnostic
    if not found:
        path = path_of_uri(uri)
        real = os.path.realpath(path) if path is not None else None
        first, last = params.range.start.line, params.range.end.line
        for finding in host.findings.all():
            if finding.path == real and finding.line - 1 <= last and finding.end_line - 1 >= first:
                found[finding.id] = None
    actions: list[lsp.CodeAction] = []
    for finding_id, seen in found.items():
        argument = {"findingId": finding_id}
        for title, command in (
            ("Fix with agent", "lspAgent.fixFinding"),
            ("Dismiss", "lspAgent.dismissFinding"),
        ):
            actions.append(
                lsp.CodeAction(
                    title=title,
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[seen] if seen is not None else None,
                    is_preferred=True if command == "lspAgent.fixFinding" else None,
                    command=lsp.Command(title=title, command=command, arguments=[argument]),
                )
            )
    return actions


def finding_id_of(diagnostic: lsp.Diagnostic) -> str | None:
    """The finding behind one of our review diagnostics, else None."""
    if diagnostic.source != SOURCE or diagnostic.code != REVIEW_CODE:
        return None
    data = diagnostic.data
    found = data.get("findingId") if isinstance(data, dict) else None
    return found if isinstance(found, str) else None


def _require(host: AgentHost, finding_id: str) -> Finding:
    finding = host.findings.get(finding_id)
    if finding is None:
        raise InvalidParams(f"findingId: no finding {finding_id!r} (a rerun replaced it?)")
    return finding


def _folder_of(host: AgentHost, path: str) -> str:
    folder = holding_folder(path, host.workspace_folders())
    if folder is None:
        raise InvalidParams("findingId: the client opened no workspace folder")
    return folder


def _range(finding: Finding) -> p.Range:
    return p.Range(
        start=p.Position(line=finding.line - 1, character=0),
        end=p.Position(line=finding.end_line, character=0),
    )


def _finding(finding: Finding) -> p.CodeReviewFinding:
    return p.CodeReviewFinding(
        id=finding.id,
        uri=file_uri(finding.path),
        range=_range(finding),
        severity=finding.lsp_severity,
        message=finding.message,
        related=[
            p.RelatedLocation(
                uri=file_uri(r.path),
                range=p.Range(
                    start=p.Position(line=r.line - 1, character=0),
                    end=p.Position(line=r.line, character=0),
                ),
                message=r.message,
            )
            for r in finding.related
        ],
    )
