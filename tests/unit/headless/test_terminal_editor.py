"""The terminal Editor's permission answers (docs/permissions.md: --yes, no terminal, a prompt)."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from lsp_agent.core.documents import NOT_OPEN
from lsp_agent.core.permission.rules import PermissionAsk, PermissionRequest
from lsp_agent.core.permission.subjects import EditSubject
from lsp_agent.headless import NO_TERMINAL, TerminalEditor


def ask(permission: str = "edit", mode: str = "build") -> PermissionAsk:
    request = PermissionRequest(
        permission=permission,
        patterns=("a.py",),
        title="Edit a.py",
        subject=EditSubject(patch="--- a/a.py\n+++ b/a.py\n@@\n-x\n+y\n"),
    )
    return PermissionAsk(session_id="s", tool_call_id="t", mode=mode, request=request)


def editor(
    *, yes: bool = False, lines: list[str] | None = None
) -> tuple[TerminalEditor, io.StringIO]:
    err = io.StringIO()
    feed: Iterator[str] | None = iter(lines) if lines is not None else None
    read_line = (lambda: next(feed, "")) if feed is not None else None
    return TerminalEditor(
        stdout=io.StringIO(), stderr=err, approve_asks=yes, read_line=read_line
    ), err


async def test_without_a_terminal_an_ask_is_rejected_with_the_contract_reason() -> None:
    ed, _ = editor()
    reply = await ed.request_permission(ask())
    assert reply.kind == "reject_once"
    assert reply.reason == NO_TERMINAL
    assert NO_TERMINAL == "not approved: no terminal (use --yes or a permission rule)"


async def test_yes_approves_an_ordinary_ask_once() -> None:
    ed, _ = editor(yes=True)
    assert (await ed.request_permission(ask())).kind == "allow_once"


@pytest.mark.parametrize(
    ("permission", "mode"), [("external_directory", "build"), ("bash", "plan")]
)
async def test_yes_never_approves_outside_paths_or_plan_mode(permission: str, mode: str) -> None:
    ed, _ = editor(yes=True)
    reply = await ed.request_permission(ask(permission, mode))
    assert reply.kind == "reject_once"
    assert reply.reason
    assert reply.reason.startswith("not approved")


@pytest.mark.parametrize(
    ("answers", "kind", "reason"),
    [
        (["y\n"], "allow_once", None),
        (["s\n"], "allow_session", None),
        (["a\n"], "allow_always", None),
        (["n\n"], "reject_once", None),
        (["?\n", "\n", "y\n"], "allow_once", None),  # asks again until it understands
        (["r\n", "use b.py\n"], "reject_once", "use b.py"),
        ([], "reject_once", "not approved: the terminal closed"),
    ],
)
async def test_a_terminal_prompt(answers: list[str], kind: str, reason: str | None) -> None:
    ed, err = editor(lines=answers)
    reply = await ed.request_permission(ask())
    assert (reply.kind, reply.reason) == (kind, reason)
    shown = err.getvalue()
    assert "Edit a.py" in shown
    assert "+y" in shown  # the diff is shown before the question


async def test_a_terminal_has_no_open_documents_to_edit() -> None:
    ed, _ = editor()
    assert await ed.open_document_text("/w/a.py") is None
    assert await ed.apply_document_edit("/w/a.py", "x\n", "y\n") == NOT_OPEN
