"""Protocol v1 part 2 end to end: code actions and commands, the editor's diagnostics, revert
and undo over LSP, and what a plain LSP client gets."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import Document, agent_client, allow_once
from tests.support.waiting import wait_until

ERROR = {
    "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}},
    "message": "undefined name: undefined_name",
    "severity": 1,
    "source": "pyright",
}


async def test_initialize_advertises_revert_and_the_commands(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    async with agent_client(env=server_env, folders=[workspace]) as client:
        capabilities = client.server_capabilities
        assert capabilities is not None
        agent = capabilities.experimental["agent"]
        assert agent["revert"] is True
        assert agent["commands"] == [
            "lspAgent.fix",
            "lspAgent.explain",
            "lspAgent.ask",
            "lspAgent.cancel",
            "lspAgent.undo",
            "lspAgent.redo",
            "lspAgent.review",
            "lspAgent.fixFinding",
            "lspAgent.dismissFinding",
        ]
        execute = capabilities.execute_command_provider
        assert execute is not None
        assert set(execute.commands) == set(agent["commands"])


async def test_a_fix_code_action_starts_a_session_about_the_diagnostic(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("x = undefined_name\n")
    fake_llm.set_script({"turns": [{"text": "Define it first."}]})
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, path.read_text())
        diagnostic = lsp.Diagnostic(
            range=lsp.Range(
                start=lsp.Position(line=0, character=4), end=lsp.Position(line=0, character=18)
            ),
            message="Name 'undefined_name' is not defined",
            severity=lsp.DiagnosticSeverity.Error,
            source="pyright",
        )
        actions = await client.code_actions(path, diagnostic.range, diagnostics=[diagnostic])
        assert actions is not None
        fix = next(a for a in actions if isinstance(a, lsp.CodeAction) and a.kind == "quickfix")
        assert fix.title == "Ask agent to fix: Name 'undefined_name' is not defined"
        assert fix.command is not None
        assert fix.command.command == "lspAgent.fix"
        titles = [a.title for a in actions]
        assert "Ask agent about selection…" in titles
        assert "Explain with agent" in titles

        started = await client.execute(fix.command.command, fix.command.arguments[0])
        session = started["sessionId"]
        end = await client.wait_idle(session)
        assert end["stopReason"] == "end_turn"
    body = fake_llm.model_bodies()[0]
    assert "diagnostics" in [tool["name"] for tool in body["tools"]]  # offered with an editor
    first = str(body["messages"])
    assert "Name 'undefined_name' is not defined" in first
    assert "a.py" in first
    assert "line 1, column 5" in first


async def test_an_edit_that_introduces_an_error_reports_it_in_the_tool_result(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    edit = {"file_path": str(path), "old_string": "x = 1", "new_string": "x = undefined_name"}
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "oops"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, path.read_text())
        client.publish_diagnostics(path.as_uri(), [])  # a language server covers the file

        def language_server(document: Document) -> None:
            if "undefined_name" in document.text:
                client.publish_diagnostics(document.uri, [ERROR])

        client.after_edit = language_server
        client.permission_answers.append(allow_once())
        session = await client.new_session()
        await client.prompt(session, "break it")
        await client.wait_idle(session)
    result = str(fake_llm.model_bodies()[1]["messages"])
    assert "undefined name: undefined_name" in result
    assert "ERROR [1:5]" in result


async def test_undo_takes_the_edit_back_and_redo_brings_it_again(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    write = {"file_path": str(path), "content": "value = 2\n"}
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "write", "input": write}]}, {"text": "done"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.permission_answers.append(allow_once())
        session = await client.new_session()
        await client.prompt(session, "set value to 2")
        await client.wait_idle(session)
        assert path.read_text() == "value = 2\n"

        checkpoints = await client.request("agent/checkpoint/list", {"sessionId": session})
        [checkpoint] = checkpoints["checkpoints"]
        assert [f["uri"] for f in checkpoint["files"]] == [path.as_uri()]

        undone = await client.execute("lspAgent.undo", {"sessionId": session})
        assert undone["prompt"] == [{"type": "text", "text": "set value to 2"}]
        assert path.read_text() == "value = 1\n"
        await client.execute("lspAgent.redo", {"sessionId": session})
        assert path.read_text() == "value = 2\n"

        staged = await client.request(
            "agent/revert/stage", {"sessionId": session, "messageId": undone["messageId"]}
        )
        assert staged["files"] == [path.as_uri()]
        assert path.read_text() == "value = 1\n"
        committed = await client.request("agent/revert/commit", {"sessionId": session})
        assert undone["messageId"] in committed["dropped"]

        with pytest.raises(JsonRpcException) as nothing:
            await client.execute("lspAgent.undo", {"sessionId": session})
        assert nothing.value.code == -33004


async def test_commands_validate_their_argument(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    async with agent_client(env=server_env, folders=[workspace]) as client:
        with pytest.raises(JsonRpcException) as missing:
            await client.execute("lspAgent.fix", {"uri": (workspace / "a.py").as_uri()})
        assert missing.value.code == -32602
        assert "range" in missing.value.message
        with pytest.raises(JsonRpcException) as unknown:
            await client.execute("lspAgent.cancel", {"sessionId": "ses_nope"})
        assert unknown.value.code == -33001


async def test_a_plain_client_gets_progress_a_message_request_and_a_transcript(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "done"}]}
    )
    async with agent_client(env=server_env, folders=[workspace], plain=True) as client:
        asked: list[str] = []

        def answer(params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem:
            asked.append(params.message)
            return lsp.MessageActionItem(title="Allow once")

        client.client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)(answer)
        client.open(path, "value = 1\n")
        diagnostic = lsp.Diagnostic(
            range=lsp.Range(
                start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=5)
            ),
            message="set value to 2",
        )
        actions = await client.code_actions(path, diagnostic.range, diagnostics=[diagnostic])
        assert actions is not None
        fix = actions[0]
        assert isinstance(fix, lsp.CodeAction)
        assert fix.command is not None
        await client.execute(fix.command.command, fix.command.arguments[0])

        await wait_until(lambda: bool(client.client.shown_documents))
        assert asked  # permission came as window/showMessageRequest
        assert client.updates == []  # no agent/session/update for a plain client
        [(token, reports)] = [
            (token, reports)
            for token, reports in client.client.progress_reports.items()
            if token != "lsp-agent/starting"  # the server's own start (test_startup.py)
        ]
        assert str(token).startswith("lsp-agent/")
        assert reports[0].kind == "begin"
        assert reports[0].cancellable is True
        assert reports[-1].kind == "end"
        [edit_applied] = client.applied_edits
        assert edit_applied["uri"] == path.as_uri()
        # VS Code's capabilities support change annotations: the edit asks to be confirmed
        assert edit_applied["annotations"] == {"lsp-agent": True}
        assert edit_applied["edits"][0]["annotationId"] == "lsp-agent"
        assert client.documents[path.as_uri()].text == "value = 2\n"
        [shown] = client.client.shown_documents
        transcript = Path(shown.uri.removeprefix("file://"))
        assert not str(transcript).startswith(str(workspace))
        assert "done" in transcript.read_text()
        assert os.path.exists(transcript)


async def test_a_plain_clients_command_ask_names_the_command_once(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    """The message a plain client shows for a command is the command, whatever the model's
    description says, and not twice (issue 32 §6)."""
    (workspace / "notes.txt").write_text("keep me\n")
    bash = {"command": "rm notes.txt", "description": "Run hello.py"}
    fake_llm.set_script({"turns": [{"tool_calls": [{"name": "bash", "input": bash}]}]})
    async with agent_client(env=server_env, folders=[workspace], plain=True) as client:
        asked: list[str] = []

        def answer(params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem:
            asked.append(params.message)
            return lsp.MessageActionItem(title="Deny")

        client.client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)(answer)
        session = await client.new_session()
        await client.prompt(session, "tidy up")
        await wait_until(lambda: bool(asked), timeout=60)
    [message] = asked
    assert message.startswith("lsp-agent wants to Run: rm notes.txt")
    assert message.count("rm notes.txt") == 1
    assert "Run hello.py" not in message
    assert (workspace / "notes.txt").read_text() == "keep me\n"


async def test_code_actions_fall_back_to_forwarded_diagnostics(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    """Neovim sends each server only its own diagnostics, so the request carries none: the
    ones the front-end forwarded on those lines are offered."""
    path = workspace / "a.py"
    path.write_text("x = undefined_name\ny = 2\n")
    async with agent_client(env=server_env, folders=[workspace], capabilities="neovim") as client:
        client.open(path, path.read_text())
        client.publish_diagnostics(path.as_uri(), [ERROR])
        line = lsp.Range(
            start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)
        )
        for _ in range(100):
            actions = await client.code_actions(path, line)
            if actions:
                break
            await asyncio.sleep(0.05)
        assert actions is not None
        [fix] = actions
        assert fix.title == "Ask agent to fix: undefined name: undefined_name"
        other_line = lsp.Range(
            start=lsp.Position(line=1, character=0), end=lsp.Position(line=1, character=0)
        )
        none = await client.code_actions(path, other_line)
        assert not none
