"""Issue 32 points 1 and 3, end to end: an agent edit to an open file is on disk before the
next command reads it; a buffer with the user's own unsaved changes keeps them and is never
saved; a client that cannot take edits and answers no request ends its turn within the
configured timeouts, with a message, the edit on disk. pytest-lsp drives the real
``lsp-agent serve`` against the fake LLM; the commands run in the real sandbox."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import client_capabilities

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import HOLD, agent_client, agent_options, allow_once
from tests.support.model_requests import edit_then_cat, tool_result_texts
from tests.support.user_config import write_user_config
from tests.support.waiting import wait_until

EDITORS = ["visual_studio_code", "neovim"]


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_command_after_an_edit_of_an_open_file_sees_the_edit(
    editor: str, workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    """A front-end that does not save (no ``savesDocuments``): the server writes the file."""
    path = workspace / "calc.py"
    path.write_text("value = 1\n")
    fake_llm.set_script(edit_then_cat(path, "done"))
    async with agent_client(env=server_env, folders=[workspace], capabilities=editor) as client:
        client.open(path, "value = 1\n")
        client.permission_answers += [allow_once(), allow_once()]
        session = await client.new_session()
        await client.prompt(session, "fix it, then show the file")
        assert (await client.wait_idle(session, timeout=60))["stopReason"] == "end_turn"
        assert client.documents[path.as_uri()].text == "value = 2\n"
        assert client.save_requests == []
    assert path.read_text() == "value = 2\n"
    edited, shown = tool_result_texts(fake_llm.model_bodies()[2])
    assert "value = 2" in shown
    assert "Note" not in edited


async def test_a_front_end_that_saves_is_asked_to_save_the_edited_buffer(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "calc.py"
    path.write_bytes(b"value = 1\n")
    fake_llm.set_script(edit_then_cat(path, "done"))
    options = agent_options(savesDocuments=True)
    async with agent_client(env=server_env, folders=[workspace], options=options) as client:
        client.open(path, "value = 1\n")
        client.permission_answers += [allow_once(), allow_once()]
        session = await client.new_session()
        await client.prompt(session, "fix it, then show the file")
        assert (await client.wait_idle(session, timeout=60))["stopReason"] == "end_turn"
        # the version the agent's edit produced (the client's didChange after applyEdit)
        assert client.save_requests == [{"documents": [{"uri": path.as_uri(), "version": 2}]}]
    assert path.read_text() == "value = 2\n"
    assert "value = 2" in tool_result_texts(fake_llm.model_bodies()[2])[1]


@pytest.mark.parametrize("saves", [False, True])
async def test_a_buffer_with_the_users_unsaved_change_keeps_it_and_is_not_saved(
    saves: bool, workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "calc.py"
    path.write_text("value = 1\n")
    fake_llm.set_script(edit_then_cat(path, "done"))
    options = agent_options(savesDocuments=saves)
    async with agent_client(env=server_env, folders=[workspace], options=options) as client:
        client.open(path, "value = 1\n")
        client.change(path, "value = 1\nmine = True\n")  # the user's typing, not saved
        client.permission_answers += [allow_once(), allow_once()]
        session = await client.new_session()
        await client.prompt(session, "fix it, then show the file")
        assert (await client.wait_idle(session, timeout=60))["stopReason"] == "end_turn"
        assert client.documents[path.as_uri()].text == "value = 2\nmine = True\n"
        assert client.save_requests == []
    assert path.read_text() == "value = 1\n"
    edited, shown = tool_result_texts(fake_llm.model_bodies()[2])
    assert "unsaved changes of their own" in edited
    assert "commands, tests, searches and git see the older version on disk" in edited
    assert "value = 1" in shown
    assert "mine" not in shown


async def test_reading_a_buffer_with_unsaved_changes_tells_the_model(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "calc.py"
    path.write_text("value = 1\n")
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "read", "input": {"file_path": str(path)}}]},
                {"text": "read"},
            ]
        }
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, "value = 1\n")
        client.change(path, "value = 3\n")
        session = await client.new_session()
        await client.prompt(session, "read it")
        await client.wait_idle(session, timeout=60)
    [read] = tool_result_texts(fake_llm.model_bodies()[1])
    assert "value = 3" in read
    assert "the file on disk differs" in read


def ale_capabilities() -> lsp.ClientCapabilities:
    """An editor that cannot take edits and answers no server request (Vim + ALE)."""
    capabilities = client_capabilities("neovim")
    assert capabilities.workspace is not None
    capabilities.workspace.apply_edit = False
    return capabilities


async def test_a_client_that_cannot_edit_and_never_answers_ends_the_turn_in_time(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    write_user_config(
        {"editor": {"ask_timeout": 3, "request_timeout": 2}, "permission": {"edit": "allow"}}
    )
    path = workspace / "calc.py"
    path.write_text("value = 1\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    cat = {"command": "cat calc.py", "description": "Show the file"}
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "edit", "input": edit}]},
                {"tool_calls": [{"name": "read", "input": {"file_path": str(path)}}]},
                {"tool_calls": [{"name": "bash", "input": cat}]},
                {"text": "never sent"},
            ]
        }
    )
    async with agent_client(
        env=server_env, folders=[workspace], capabilities=ale_capabilities(), plain=True
    ) as client:
        client.never_answer(
            lsp.WINDOW_SHOW_MESSAGE_REQUEST,
            lsp.WINDOW_WORK_DONE_PROGRESS_CREATE,
            lsp.WINDOW_SHOW_DOCUMENT,
            lsp.WORKSPACE_APPLY_EDIT,
        )
        client.open(path, "value = 1\n")
        session = await client.new_session()
        await client.prompt(session, "fix it, then show the file")

        async def state() -> str:
            result = await client.request("agent/session/list", {})
            [summary] = [s for s in result["sessions"] if s["sessionId"] == session]
            return str(summary["state"])

        # the ask (3 s) and the progress token (2 s) run out; generous for a slow machine
        for _ in range(600):
            if await state() == "idle" and len(fake_llm.model_bodies()) == 3:
                break
            await asyncio.sleep(0.1)
        assert await state() == "idle"
        methods = [method for method, _ in client.unanswered]
        assert lsp.WORKSPACE_APPLY_EDIT not in methods
        assert lsp.WINDOW_SHOW_MESSAGE_REQUEST in methods
        await wait_until(lambda: len(client.client.messages) >= 2, timeout=30)
        shown = [m.message for m in client.client.messages]
        assert any("changed calc.py on disk" in m and "reload" in m for m in shown)
        assert any("got no answer within 3 s" in m for m in shown)
        # the buffer is the editor's; the disk has the edit
        assert client.documents[path.as_uri()].text == "value = 1\n"
        exported = await client.request(
            "agent/session/export", {"sessionId": session, "format": "json"}
        )
    assert path.read_text() == "value = 2\n"
    assert len(fake_llm.model_bodies()) == 3  # the turn ended at the unanswered ask
    edited, read = tool_result_texts(fake_llm.model_bodies()[2])
    assert "written to the file on disk" in edited
    assert "value = 2" in read  # the disk, not the editor's outdated buffer
    assert "Nobody answered the permission request within 3 s" in json.dumps(exported)


async def test_asks_and_edits_nobody_answers_time_out_with_a_message(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    """An agent front-end that stops answering: an edit is a conflict after
    ``editor.request_timeout`` (the turn goes on), a permission ask ends the turn after
    ``editor.ask_timeout``, a question too; each time the user gets a message."""
    write_user_config({"editor": {"ask_timeout": 6, "request_timeout": 3}})
    path = workspace / "calc.py"
    path.write_text("value = 1\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    cat = {"command": "cat calc.py", "description": "Show the file"}
    question = {"questions": [{"question": "Which runner?", "options": [{"label": "pytest"}]}]}
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "edit", "input": edit}]},
                {"tool_calls": [{"name": "bash", "input": cat}]},
                {"tool_calls": [{"name": "question", "input": question}]},
                {"text": "never sent"},
            ]
        }
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.never_answer(lsp.WORKSPACE_APPLY_EDIT, "agent/session/askQuestion")
        client.open(path, "value = 1\n")
        client.permission_answers += [allow_once(), HOLD]
        session = await client.new_session()
        await client.prompt(session, "fix it, then show the file")
        end = await client.wait_idle(session, timeout=60)
        assert end["stopReason"] == "cancelled"
        assert len(client.cancelled_requests) == 1  # the held dialog, withdrawn at its timeout
        await wait_until(lambda: len(client.client.messages) >= 2, timeout=30)
        shown = [m.message for m in client.client.messages]
        assert any("did not answer the agent's edit of calc.py within 3 s" in m for m in shown)
        assert any("permission request" in m and "no answer within 6 s" in m for m in shown)

        # the next turn: a question nobody answers ends it too
        await client.prompt(session, "ask me")
        await wait_until(lambda: len(fake_llm.model_bodies()) == 3, timeout=60)
        await client.wait_for(
            lambda u: (
                u["sessionId"] == session
                and u["update"].get("sessionUpdate") == "state_update"
                and u["update"].get("state") == "idle"
                and len(fake_llm.model_bodies()) == 3
            ),
            timeout=60,
        )
        await wait_until(lambda: len(client.client.messages) >= 3, timeout=30)
        assert "questions got no answer within 6 s" in client.client.messages[-1].message
        [asked] = [
            u["update"]
            for u in client.session_updates(session)
            if u["update"].get("sessionUpdate") == "tool_call_update"
            and u["update"].get("toolName") == "question"
            and u["update"].get("status") == "failed"
        ]
        assert "Nobody answered the questions within 6 s" in json.dumps(asked)
    assert path.read_text() == "value = 1\n"
    results = tool_result_texts(fake_llm.model_bodies()[1])
    assert "did not answer within 3 s" in results[0]
    assert len(fake_llm.model_bodies()) == 3
