"""Contexts for running a tool directly in a test, as the registry would hand them over, and
specs for the fake tool executors tests give the core."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.core.interfaces import Editor
from lsp_agent.core.messages import ToolKind, ToolSpec
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tooling import AskPermission, ToolCallContext
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import workspace_only
from lsp_agent.tools.base import ToolRunContext
from lsp_agent.workspace.boundary import WorkspaceBoundary


def call_context(
    workspace: Path | str,
    *,
    ask: AskPermission = workspace_only,
    session_id: str = "ses_1",
    message_id: str = "msg_1",
    tool_call_id: str = "call_1",
) -> ToolCallContext:
    """One call in ``session_id``; ``workspace`` is its only root, as given (not realpath-ed)."""
    return ToolCallContext(
        session_id=session_id,
        message_id=message_id,
        tool_call_id=tool_call_id,
        workspace_roots=(str(workspace),),
        ask=ask,
    )


def tool_context(
    workspace: Path | str,
    *,
    ask: AskPermission = workspace_only,
    editor: Editor | None = None,
    extra_roots: tuple[str, ...] = (),
    session_id: str = "ses_1",
    message_id: str = "msg_1",
    tool_call_id: str = "call_1",
) -> ToolRunContext:
    """What a tool's ``run`` gets: :func:`call_context`, a boundary at ``workspace`` and an
    editor (a fresh :class:`RecordingEditor` unless one is given)."""
    call = call_context(
        workspace,
        ask=ask,
        session_id=session_id,
        message_id=message_id,
        tool_call_id=tool_call_id,
    )
    return ToolRunContext(
        call=call,
        boundary=WorkspaceBoundary([workspace]),
        editor=editor if editor is not None else RecordingEditor(),
        extra_roots=extra_roots,
    )


def tool_spec(
    name: str,
    *,
    kind: ToolKind = "other",
    mutates: bool = False,
    permission: PermissionKind | None = None,
) -> ToolSpec:
    """A fake tool's spec: any object as arguments, its name as the description. A tool
    named like a permission (``read``, ``bash``, ``task``…) asks for it unless ``permission``
    says otherwise; any other name must say which it asks for."""
    return ToolSpec(
        name=name,
        description=name,
        input_schema={"type": "object"},
        kind=kind,
        mutates=mutates,
        permission=permission if permission is not None else PermissionKind(name),
    )
