"""Protocol v1 end to end: pytest-lsp drives the real ``lsp-agent serve`` (a subprocess)
with VS Code's and Neovim's recorded capabilities, against the fake LLM server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import (
    HOLD,
    AgentClient,
    agent_client,
    allow_once,
    reject,
)

EDITORS = ["visual_studio_code", "neovim"]


def streamed_text(updates: list[dict[str, Any]]) -> str:
    return "".join(
        u["update"]["text"]
        for u in updates
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )


def tool_updates(updates: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [
        u["update"]
        for u in updates
        if u["update"]["sessionUpdate"] == "tool_call_update"
        and u["update"].get("toolName") == name
    ]


@pytest.mark.parametrize("editor", EDITORS)
async def test_read_sees_the_unsaved_buffer(
    editor: str, workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("on_disk = 1\n")
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "read", "input": {"file_path": str(path)}}]},
                {"text": "seen"},
            ]
        }
    )
    async with agent_client(env=server_env, folders=[workspace], capabilities=editor) as client:
        client.open(path, "unsaved = 2\n")
        session = await client.new_session()
        answer = await client.prompt(session, "read a.py")
        assert answer["queued"] is False
        assert (await client.wait_idle(session))["stopReason"] == "end_turn"
    second = str(fake_llm.model_bodies()[1]["messages"])
    assert "unsaved = 2" in second
    assert "on_disk" not in second


@pytest.mark.parametrize("editor", EDITORS)
async def test_an_edit_to_an_open_buffer_asks_with_a_diff_and_goes_through_apply_edit(
    editor: str, workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    unsaved = "value = 1\nunsaved = True\n"
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "edit", "input": edit}]},
                {"text": "Changed the value ", "chunk_delay": 0.01},
            ]
        }
    )
    async with agent_client(env=server_env, folders=[workspace], capabilities=editor) as client:
        client.open(path, unsaved)
        client.permission_answers.append(allow_once())
        session = await client.new_session()
        await client.prompt(session, "set value to 2")
        end = await client.wait_idle(session)
        assert end["stopReason"] == "end_turn"

        [asked] = client.permission_requests
        assert asked["sessionId"] == session
        assert asked["permission"] == "edit"
        subject = asked["subject"]
        assert subject["type"] == "edit"
        assert subject["files"] == [{"uri": path.as_uri(), "additions": 1, "deletions": 1}]
        assert "-value = 1" in subject["patch"]
        assert "+value = 2" in subject["patch"]
        assert {o["kind"] for o in asked["options"]} >= {"allow_once", "reject_once"}

        diff = await client.request(
            "agent/diff/get",
            {"sessionId": session, "changeSetId": subject["changeSetId"], "uri": path.as_uri()},
        )
        assert diff["baseText"] == unsaved
        assert diff["proposedText"] == "value = 2\nunsaved = True\n"

        [applied] = client.applied_edits
        assert applied["uri"] == path.as_uri()
        if editor == "visual_studio_code":
            # a versioned TextDocumentEdit, at the version the editor had when asked
            assert applied["version"] == 1
        else:
            # Neovim's recorded capabilities do not advertise documentChanges: plain
            # `changes` (the server checked the buffer's text just before sending)
            assert applied["version"] is None
        assert [e["newText"] for e in applied["edits"]] == ["2"]
        assert client.documents[path.as_uri()].text == "value = 2\nunsaved = True\n"
        assert path.read_text() == "value = 1\n"  # the disk is the user's to save

        updates = client.session_updates(session)
        assert streamed_text(updates) == "Changed the value "
        states = [
            u["update"]["state"] for u in updates if u["update"]["sessionUpdate"] == "state_update"
        ]
        assert "requires_action" in states
        assert tool_updates(updates, "edit")[-1]["status"] == "completed"


async def test_a_reject_with_a_reason_reaches_the_model(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "ok, tabs"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, "value = 1\n")
        client.permission_answers.append(reject("use tabs, not spaces"))
        session = await client.new_session()
        await client.prompt(session, "change it")
        assert (await client.wait_idle(session))["stopReason"] == "end_turn"
        assert client.applied_edits == []
        assert client.documents[path.as_uri()].text == "value = 1\n"
    assert "use tabs, not spaces" in str(fake_llm.model_bodies()[1]["messages"])
    assert path.read_text() == "value = 1\n"


async def test_a_buffer_changed_after_the_ask_is_a_conflict_not_a_disk_write(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "noted"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, "value = 1\n")
        client.refuse_edits = True
        client.permission_answers.append(allow_once())
        session = await client.new_session()
        await client.prompt(session, "change it")
        await client.wait_idle(session)
        assert tool_updates(client.session_updates(session), "edit")[-1]["status"] == "failed"
    result = str(fake_llm.model_bodies()[1]["messages"])
    assert "refused" in result
    assert path.read_text() == "value = 1\n"


async def test_cancel_interrupts_a_running_bash_and_the_session_goes_idle(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    fake_llm.set_script(
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "bash", "input": {"command": "sleep 60", "description": "wait"}}
                    ]
                },
                {"text": "never"},
            ]
        }
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.permission_answers.append(allow_once())
        session = await client.new_session()
        await client.prompt(session, "wait a minute")
        # the command runs (its permission answered: a cancel during the ask is "cancelled")
        await client.wait_for(
            lambda u: (
                u["update"].get("sessionUpdate") == "internal"
                and u["update"].get("type") == "process_started"
            )
        )
        client.notify("agent/session/cancel", {"sessionId": session})
        client.notify("agent/session/cancel", {"sessionId": session})  # idempotent
        end = await client.wait_idle(session)
        assert end["stopReason"] == "cancelled"
        assert tool_updates(client.session_updates(session), "bash")[-1]["status"] == "interrupted"
        # the server is healthy and the session usable afterwards
        listed = await client.request("agent/session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [session]
        assert listed["sessions"][0]["state"] == "idle"
        client.notify("agent/session/cancel", {"sessionId": session})  # harmless when idle


async def test_load_with_full_replay_reproduces_the_live_stream(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    fake_llm.set_script(
        {
            "turns": [
                {
                    "text": "Let me look. ",
                    "tool_calls": [{"name": "read", "input": {"file_path": str(path)}}],
                },
                {"text": "It sets x to one.", "chunk_delay": 0.005},
            ]
        }
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session = await client.new_session()
        await client.prompt(session, "what does a.py do?", clientMessageId="c1")
        await client.wait_idle(session)
        await client.wait_for(  # the title (a side request) lands too
            lambda u: u["sessionId"] == session and u["update"].get("title") == "Test title"
        )
        live = list(client.session_updates(session))
        seqs = [u["seq"] for u in live]
        assert seqs == list(range(1, len(seqs) + 1))

        before = len(client.updates)
        loaded = await client.request(
            "agent/session/load", {"sessionId": session, "replay": "full"}
        )
        replayed = client.updates[before:]
        assert [u["seq"] for u in replayed] == list(range(1, loaded["lastSeq"] + 1))
        assert loaded["state"] == "idle"
        assert {o["configId"] for o in loaded["configOptions"]} == {
            "mode",
            "model",
            "thought_level",
        }
        assert replayed[: len(live)] == live
        assert streamed_text(replayed) == streamed_text(live) == "Let me look. It sets x to one."

        again = await client.prompt(session, "what does a.py do?", clientMessageId="c1")
        first_user = next(u for u in live if u["update"]["sessionUpdate"] == "user_message")
        assert again["userMessageId"] == first_user["update"]["messageId"]

        history = await client.request("agent/session/history", {"sessionId": session})
        assert [e["seq"] for e in history["events"]] == list(range(1, loaded["lastSeq"] + 1))
        exported = await client.request(
            "agent/session/export", {"sessionId": session, "format": "markdown"}
        )
        assert "It sets x to one." in exported["text"]


async def test_bad_input_gets_the_right_error_codes(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    fake_llm.set_script({"turns": [{"text": "slow", "hold_after": 0}]})  # until release()
    async with agent_client(env=server_env, folders=[workspace]) as client:
        with pytest.raises(JsonRpcException) as missing:
            await client.request("agent/session/prompt", {"prompt": []})
        assert missing.value.code == -32602
        assert "sessionId" in missing.value.message

        with pytest.raises(JsonRpcException) as unknown:
            await client.request("agent/session/load", {"sessionId": "ses_nope"})
        assert unknown.value.code == -33001

        with pytest.raises(JsonRpcException) as outside:
            await client.request("agent/session/new", {"workspaceFolder": "file:///etc"})
        assert outside.value.code == -32602
        assert "workspaceFolder" in outside.value.message

        session = await client.new_session()
        await client.prompt(session, "take your time")
        await client.wait_for(
            lambda u: (
                u["update"].get("sessionUpdate") == "state_update"
                and u["update"].get("state") == "running"
            )
        )
        with pytest.raises(JsonRpcException) as busy:
            await client.request("agent/session/delete", {"sessionId": session})
        assert busy.value.code == -33002
        queued = await client.prompt(session, "and then this")
        assert queued["queued"] is True
        fake_llm.release()
        await client.wait_idle(session)


async def test_set_config_option_changes_the_mode(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session = await client.new_session()
        result = await client.request(
            "agent/session/setConfigOption",
            {"sessionId": session, "configId": "mode", "value": "plan"},
        )
        mode = next(o for o in result["configOptions"] if o["configId"] == "mode")
        assert mode["currentValue"] == "plan"
        await client.wait_for(lambda u: u["update"].get("sessionUpdate") == "config_option_update")
        with pytest.raises(JsonRpcException) as bad:
            await client.request(
                "agent/session/setConfigOption",
                {"sessionId": session, "configId": "mode", "value": "yolo"},
            )
        assert bad.value.code == -32602


async def test_every_workspace_folder_is_inside_the_boundary_and_it_follows_changes(
    tmp_path: Path, workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    second = tmp_path / "second"
    second.mkdir()
    (second / "b.py").write_text("in_second = True\n")
    read_b = {"tool_calls": [{"name": "read", "input": {"file_path": str(second / "b.py")}}]}
    fake_llm.set_script({"turns": [read_b, {"text": "read it"}, read_b, {"text": "refused"}]})
    async with agent_client(env=server_env, folders=[workspace, second]) as client:
        session = await client.new_session()  # works in the first folder
        await client.prompt(session, "read b.py")
        await client.wait_idle(session)
        assert client.permission_requests == []  # the second folder is inside, no ask
        assert "in_second = True" in str(fake_llm.model_bodies()[1]["messages"])

        client.client.workspace_did_change_workspace_folders(
            lsp.DidChangeWorkspaceFoldersParams(
                event=lsp.WorkspaceFoldersChangeEvent(
                    added=[], removed=[lsp.WorkspaceFolder(uri=second.as_uri(), name="second")]
                )
            )
        )
        await _eventually_refused_folder(client, second.as_uri())
        client.permission_answers.append(reject("stay in the workspace"))
        second_turn = await client.prompt(session, "read b.py again")
        await client.wait_for(
            lambda u: (
                u["update"].get("sessionUpdate") == "state_update"
                and u["update"].get("state") == "idle"
                and u["seq"] > _seq_of(client, second_turn["userMessageId"])
            )
        )
        [asked] = client.permission_requests
        assert asked["permission"] == "external_directory"
        assert "stay in the workspace" in str(fake_llm.model_bodies()[3]["messages"])


async def test_a_folder_added_later_can_hold_a_session(
    tmp_path: Path, workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    async with agent_client(env=server_env, folders=[workspace]) as client:
        with pytest.raises(JsonRpcException):
            await client.request("agent/session/new", {"workspaceFolder": other.as_uri()})
        client.client.workspace_did_change_workspace_folders(
            lsp.DidChangeWorkspaceFoldersParams(
                event=lsp.WorkspaceFoldersChangeEvent(
                    added=[lsp.WorkspaceFolder(uri=other.as_uri(), name="other")], removed=[]
                )
            )
        )
        session = await _eventually_new_session(client, other.as_uri())
        assert session.startswith("ses")


def _seq_of(client: AgentClient, message_id: str) -> int:
    return next(
        u["seq"]
        for u in client.updates
        if u["update"].get("sessionUpdate") == "user_message"
        and u["update"]["messageId"] == message_id
    )


async def _eventually_refused_folder(client: AgentClient, folder: str) -> None:
    for _ in range(50):
        try:
            await client.new_session(workspaceFolder=folder)
        except JsonRpcException:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the removed folder stayed a workspace folder")


async def _eventually_new_session(client: AgentClient, folder: str) -> str:
    for _ in range(50):
        try:
            return await client.new_session(workspaceFolder=folder)
        except JsonRpcException:
            await asyncio.sleep(0.05)
    raise AssertionError("the added folder never became a workspace folder")


@pytest.mark.parametrize("editor", EDITORS)
async def test_cancel_while_a_permission_dialog_is_open(
    editor: str, workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    bash = {"command": "echo hi", "description": "say hi"}
    fake_llm.set_script({"turns": [{"tool_calls": [{"name": "bash", "input": bash}]}]})
    async with agent_client(env=server_env, folders=[workspace], capabilities=editor) as client:
        client.permission_answers.append(HOLD)
        session = await client.new_session()
        await client.prompt(session, "say hi")
        await client.wait_for(
            lambda u: (
                u["update"].get("sessionUpdate") == "state_update"
                and u["update"].get("state") == "requires_action"
            )
        )
        client.notify("agent/session/cancel", {"sessionId": session})
        end = await client.wait_idle(session)
        assert end["stopReason"] == "cancelled"
        updates = client.session_updates(session)
        permission = [
            u["update"] for u in updates if u["update"]["sessionUpdate"] == "permission_update"
        ]
        assert [p["state"] for p in permission] == ["asked", "cancelled"]
        assert tool_updates(updates, "bash")[-1]["status"] == "cancelled"
        await client.wait_until(lambda: bool(client.cancelled_requests))  # the dialog closed


async def test_questions_go_to_the_editor_and_the_answers_to_the_model(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    ask = {
        "questions": [
            {
                "question": "Which style?",
                "header": "Style",
                "options": [{"label": "tabs"}, {"label": "spaces"}],
            }
        ]
    }
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "question", "input": ask}]}, {"text": "tabs it is"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.question_answers.append(
            {"outcome": "answered", "answers": {"q1": {"selected": ["tabs"]}}}
        )
        session = await client.new_session()
        await client.prompt(session, "ask me")
        assert (await client.wait_idle(session))["stopReason"] == "end_turn"
        [asked] = client.questions
        assert asked["sessionId"] == session
        assert asked["questions"][0]["questionId"] == "q1"
        assert [o["label"] for o in asked["questions"][0]["options"]] == ["tabs", "spaces"]
        states = [
            u["update"]["state"]
            for u in client.session_updates(session)
            if u["update"]["sessionUpdate"] == "question_update"
        ]
        assert states == ["asked", "answered"]
    assert "tabs" in str(fake_llm.model_bodies()[1]["messages"])


async def test_a_plain_lsp_client_is_asked_with_show_message_request(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    """No ``initializationOptions.agent``: the permission comes as a standard message
    request, and the edit still goes through ``workspace/applyEdit``."""
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "done"}]}
    )
    shown: list[lsp.ShowMessageRequestParams] = []
    async with agent_client(env=server_env, folders=[workspace], plain=True) as client:

        def answer(params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem:
            shown.append(params)
            return lsp.MessageActionItem(title="Allow once")

        client.client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)(answer)
        client.open(path, "value = 1\n")
        session = await client.new_session()
        await client.prompt(session, "change it")
        # a plain client gets no agent/session/update: the turn's end is its progress end
        for _ in range(600):
            reports = [
                r
                for token, rs in client.client.progress_reports.items()
                if token != "lsp-agent/starting"  # the server's own start (test_startup.py)
                for r in rs
            ]
            if reports and reports[-1].kind == "end":
                break
            await asyncio.sleep(0.05)
        assert reports[-1].message == "end_turn: done"  # the reason, then the answer
        assert client.permission_requests == []
        assert client.updates == []
        [message] = shown
        assert [a.title for a in message.actions or []] == [
            "Allow once",
            "Allow for session",
            "Deny",
        ]
        assert message.message.endswith("(Allow for session saves edit *)")  # what it saves
        assert client.documents[path.as_uri()].text == "value = 2\n"
    assert path.read_text() == "value = 2\n"  # it cannot save: the server wrote the same text
