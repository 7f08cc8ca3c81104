"""Code actions at a cursor, against the real ``lsp-agent serve`` (issue 32 §4): Emacs
lsp-mode, Vim's ALE and vim-lsp ask with an empty range and only their LSP servers'
diagnostics, so with none on the line they were offered nothing. Now an invoked request at a
cursor offers the line's actions (the light bulb's automatic requests still get none), a
request's ``only`` is honoured, and "Ask agent to fix this line" runs a turn about that
line."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import AgentClient, agent_client
from tests.support.waiting import wait_until

SOURCE = "import os\nprint(valu)\n"


async def actions_at(
    client: AgentClient,
    path: Path,
    line: int,
    *,
    trigger: lsp.CodeActionTriggerKind | None = None,
    only: list[str] | None = None,
    diagnostics: list[lsp.Diagnostic] | None = None,
) -> list[lsp.CodeAction]:
    cursor = lsp.Position(line=line, character=3)
    found = await client.code_actions(
        path,
        lsp.Range(start=cursor, end=cursor),
        diagnostics=diagnostics or [],
        only=only,
        trigger=trigger,
    )
    return [a for a in found or [] if isinstance(a, lsp.CodeAction)]


async def test_a_cursor_gets_the_lines_actions_when_asked(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    fake_llm.set_script({"turns": [{"text": "valu is undefined; you meant value."}]})
    async with agent_client(env=server_env, folders=[workspace], plain=True) as client:
        client.open(path, SOURCE)
        invoked = await actions_at(client, path, 1)
        automatic = await actions_at(client, path, 1, trigger=lsp.CodeActionTriggerKind.Automatic)
        quickfixes = await actions_at(client, path, 1, only=["quickfix"])
        refactors = await actions_at(client, path, 1, only=["refactor"])
        problem = lsp.Diagnostic(
            range=lsp.Range(
                start=lsp.Position(line=1, character=6), end=lsp.Position(line=1, character=10)
            ),
            message="undefined name 'valu'",
        )
        with_problem = await actions_at(client, path, 1, diagnostics=[problem])

        [fix] = [a for a in invoked if a.title == "Ask agent to fix this line"]
        assert fix.command is not None
        await client.execute(fix.command.command, fix.command.arguments[0])
        await wait_until(lambda: bool(fake_llm.requests))
        await wait_until(lambda: bool(client.client.messages or client.client.shown_documents))

    assert [a.title for a in invoked] == [
        "Ask agent to fix this line",
        "Ask agent about this line…",
        "Explain with agent",
    ]
    assert fix.kind == lsp.CodeActionKind.QuickFix
    # the whole line: its text goes with "about" and "explain"
    assert fix.command.arguments[0]["range"] == {
        "start": {"line": 1, "character": 0},
        "end": {"line": 1, "character": 11},
    }
    assert automatic == []  # no light bulb on every line
    assert [a.title for a in quickfixes] == ["Ask agent to fix this line"]
    assert [a.title for a in refactors] == ["Ask agent about this line…", "Explain with agent"]
    # a diagnostic on the line: its own fix, as before
    assert [a.title for a in with_problem] == ["Ask agent to fix: undefined name 'valu'"]
    sent = str(fake_llm.requests[0].body["messages"])
    assert "Fix this problem in a.py (line 2)" in sent


async def test_a_selection_is_unchanged_and_only_filters_it(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    async with agent_client(env=server_env, folders=[workspace], plain=True) as client:
        client.open(path, SOURCE)
        selection = lsp.Range(
            start=lsp.Position(line=0, character=0), end=lsp.Position(line=1, character=5)
        )
        found = await client.code_actions(path, selection, only=["quickfix"])
        everything = await client.code_actions(path, selection)

    assert not found
    assert [a.title for a in everything or [] if isinstance(a, lsp.CodeAction)] == [
        "Ask agent about selection…",
        "Explain with agent",
    ]
