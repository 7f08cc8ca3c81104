"""Issue 35: a command whose effects cannot be judged before it runs (interpreter code such
as ``python3 -c``, a path only the running shell knows) raises ONE ask, through the real
gate: the command itself, and why it is asked, in words a user reads. It used to raise an
``external_directory`` ask ("paths that cannot be judged before it runs") and then the
command's own ``bash`` ask."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lsp_agent.config.settings import DEFAULT_PERMISSION_RULES
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.permission.rules import Action, PermissionAsk, PermissionReply, Rule
from lsp_agent.core.session.service import SessionService
from lsp_agent.core.stream_events import Finished, StreamEvent, TextDelta, ToolCallEnded
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.provider import ScriptedProvider
from lsp_agent.tools.registry import default_registry
from lsp_agent.workspace.truncation import OutputLimits

MODEL = ModelInfo(provider="scripted", model="m")
PYTHON = f"{sys.executable} -c \"print('hi from python')\""


def rules(*extra: tuple[str, str, Action]) -> tuple[Rule, ...]:
    built_in = [
        Rule(permission=r.permission, pattern=r.pattern, action=r.action, source=r.source)
        for r in DEFAULT_PERMISSION_RULES
    ]
    return (
        *built_in,
        *(Rule(permission=p, pattern=q, action=a, source="test") for p, q, a in extra),
    )


def bash(command: str) -> list[StreamEvent]:
    return [
        ToolCallEnded(tool_call_id="b1", name="bash", input={"command": command}),
        Finished(reason="tool_use"),
    ]


async def asks_of(
    command: str,
    store: SqliteEventStore,
    workspace: Path,
    tmp_path: Path,
    *,
    reply: PermissionReply,
    configured: tuple[Rule, ...] = rules(),
) -> tuple[list[PermissionAsk], RecordingEditor]:
    editor = RecordingEditor([reply, reply])  # a second ask would be answered too: counted
    provider = ScriptedProvider(
        [bash(command), [TextDelta(text="ok"), Finished(reason="end_turn")]]
    )
    svc = SessionService(
        store=store,
        provider=provider,
        tools=default_registry(editor, limits=OutputLimits(), spill_root=tmp_path / "spill"),
        editor=editor,
        clock=FakeClock(),
        ids=SequentialIds(),
        options=AgentOptions(model=MODEL, titles=False, rules=configured),
    )
    sid = await svc.create(workspace_folder=str(workspace))
    await svc.admit(sid, [{"type": "text", "text": "run it"}])
    await svc.run_turn(sid)
    return editor.asks, editor


async def test_an_interpreter_one_liner_is_one_ask_in_plain_words(
    store: SqliteEventStore, workspace: Path, tmp_path: Path
) -> None:
    asks, editor = await asks_of(
        PYTHON, store, workspace, tmp_path, reply=PermissionReply(kind="allow_once")
    )

    (ask,) = asks
    request = ask.request
    assert request.permission == "bash"
    assert request.title == f"Run: {PYTHON}"
    assert "runs code that cannot be checked before it runs" in (request.description or "")
    assert "only you, once" in (request.description or "")
    shown = f"{request.title} {request.description}"
    assert "external_directory" not in shown
    assert "judged" not in shown
    # nothing can be saved: only "allow once" and "reject" are offered
    assert [option.kind for option in ask.options] == ["allow_once", "reject_once"]
    (done,) = [
        e.data for e in editor.of_type("tool_call_updated") if e.data["status"] == "completed"
    ]
    assert "hi from python" in done["output"]


@pytest.mark.parametrize(
    "command",
    [
        "node -e 'console.log(1)'",
        "perl -e 'print 1'",
        'bash -c "$CMD"',
        'cat "$SOME_FILE"',
        "d=src; cd $d && ls",
    ],
)
async def test_every_unjudgeable_command_is_one_ask_even_where_rules_allow_bash(
    command: str, store: SqliteEventStore, workspace: Path, tmp_path: Path
) -> None:
    asks, _ = await asks_of(
        command,
        store,
        workspace,
        tmp_path,
        reply=PermissionReply(kind="reject_once", reason="no"),
        configured=rules(("bash", "*", "allow")),
    )

    (ask,) = asks  # still asked: no rule may allow what cannot be judged
    assert ask.request.permission == "bash"
    assert ask.request.description is not None
    assert ask.request.description.startswith("Asked every time because ")


async def test_a_real_outside_folder_is_still_its_own_ask(
    store: SqliteEventStore, workspace: Path, tmp_path: Path
) -> None:
    asks, _ = await asks_of(
        "touch ../elsewhere.txt",
        store,
        workspace,
        tmp_path,
        reply=PermissionReply(kind="reject_once", reason="no"),
    )

    (ask,) = asks  # refused at the folder: the command is not asked for
    assert ask.request.permission == "external_directory"
    assert not (workspace.parent / "elsewhere.txt").exists()


@pytest.mark.parametrize("command", [PYTHON, 'cat "$SOME_FILE"', 'eval "$(cat cmd.txt)"'])
async def test_a_configured_deny_of_outside_folders_still_denies_what_cannot_be_judged(
    command: str, store: SqliteEventStore, workspace: Path, tmp_path: Path
) -> None:
    """Unjudgeable code may reach any folder: ``external_directory: deny`` stays final for it
    (a deny is never turned into an ask), with no ask at all."""
    asks, editor = await asks_of(
        command,
        store,
        workspace,
        tmp_path,
        reply=PermissionReply(kind="allow_once"),
        configured=rules(("external_directory", "*", "deny"), ("bash", "*", "allow")),
    )

    assert asks == []
    (failed,) = [
        e.data for e in editor.of_type("tool_call_updated") if e.data["status"] == "failed"
    ]
    assert "external_directory" in failed["error"]
