"""Issue 21, server side, end to end: an edited proposal (``modifiedContent`` in the permission
answer) is what lands and what the model is told about; ``agent/revert/stage`` by scope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import AgentClient, agent_client, allow_once

NOTE = "The user modified your proposed change to"


def allow_with(texts: dict[Path, str]) -> dict[str, Any]:
    answer = allow_once()
    answer["outcome"]["modifiedContent"] = {path.as_uri(): text for path, text in texts.items()}
    return answer


def tool_results(body: dict[str, Any]) -> str:
    """Every tool result's text in one model request (Anthropic's wire format)."""
    found: list[str] = []
    for message in body["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            if isinstance(inner, str):
                found.append(inner)
            else:
                found += [b.get("text", "") for b in inner or [] if isinstance(b, dict)]
    return "\n".join(found)


def updates_of(client: AgentClient, session: str, kind: str) -> list[dict[str, Any]]:
    return [
        u["update"]
        for u in client.session_updates(session)
        if u["update"].get("sessionUpdate") == kind
    ]


async def test_an_edited_proposal_lands_in_the_open_buffer_and_the_model_is_told(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\nother = 1\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "noted"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, "value = 1\nother = 1\n")
        client.permission_answers.append(allow_with({path: "value = 3\nother = 1\n"}))
        session = await client.new_session()
        await client.prompt(session, "set value to 2")
        assert (await client.wait_idle(session))["stopReason"] == "end_turn"

        assert client.documents[path.as_uri()].text == "value = 3\nother = 1\n"
        [applied] = client.applied_edits
        assert [e["newText"] for e in applied["edits"]] == ["3"]
        allowed = [
            u for u in updates_of(client, session, "permission_update") if u["state"] == "allowed"
        ]
        assert [u.get("modified") for u in allowed] == [True]
        [asked] = [
            u for u in updates_of(client, session, "permission_update") if u["state"] == "asked"
        ]
        assert "modified" not in asked
    assert path.read_text() == "value = 3\nother = 1\n"  # the disk follows the buffer
    result = tool_results(fake_llm.model_bodies()[1])
    assert f"{NOTE} a.py before it was applied" in result
    assert "-value = 2\n+value = 3\n" in result


async def test_an_edited_proposal_of_a_closed_file_is_written_to_disk(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path, other = workspace / "c.py", workspace / "other.py"
    other.write_text("untouched = True\n")
    write = {"file_path": str(path), "content": "c = 'model'\nshared = 1\n"}
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "write", "input": write}]}, {"text": "noted"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        # a text for a file the ask does not name is ignored
        client.permission_answers.append(
            allow_with({path: "c = 'user'\nshared = 1\n", other: "overwritten = True\n"})
        )
        session = await client.new_session()
        await client.prompt(session, "write c.py")
        assert (await client.wait_idle(session))["stopReason"] == "end_turn"
        assert client.applied_edits == []
    assert path.read_text() == "c = 'user'\nshared = 1\n"
    assert other.read_text() == "untouched = True\n"
    result = tool_results(fake_llm.model_bodies()[1])
    assert f"{NOTE} c.py before it was applied" in result
    assert "-c = 'model'\n+c = 'user'\n" in result
    assert "other.py" not in result


async def _one_writing_turn(
    client: AgentClient, fake_llm: FakeLLMServer, path: Path
) -> tuple[str, str]:
    """FIRST-PROMPT writes ``path``; then the script answers one more prompt. The session
    and the first user message's id."""
    write = {"file_path": str(path), "content": "b = 2\n"}
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "write", "input": write}]},
                {"text": "wrote it"},
                {"text": "next answer"},
            ]
        }
    )
    client.permission_answers.append(allow_once())
    session = await client.new_session()
    await client.prompt(session, "FIRST-PROMPT")
    await client.wait_idle(session)
    assert path.read_text() == "b = 2\n"
    [user] = [u for u in updates_of(client, session, "user_message") if u["state"] == "promoted"]
    return session, str(user["messageId"])


async def _next_prompt(client: AgentClient, session: str) -> None:
    """SECOND-PROMPT, answered: its turn is the session's second to go idle."""
    await client.prompt(session, "SECOND-PROMPT")

    def idles(_update: dict[str, Any]) -> bool:
        ended = [u for u in updates_of(client, session, "state_update") if u["state"] == "idle"]
        return len(ended) >= 2

    await client.wait_for(idles)


async def _staged(
    client: AgentClient, fake_llm: FakeLLMServer, path: Path, scope: str
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """One writing turn, then a revert of it staged with ``scope``: the session, the
    ``revert/stage`` answer and the ``revert_update`` it streamed."""
    session, message_id = await _one_writing_turn(client, fake_llm, path)
    staged = await client.request(
        "agent/revert/stage", {"sessionId": session, "messageId": message_id, "scope": scope}
    )
    [update] = updates_of(client, session, "revert_update")
    assert (update["state"], update["scope"]) == ("staged", scope)
    return session, staged, update


async def test_revert_scope_code_restores_the_files_and_keeps_the_messages(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "b.py"
    path.write_text("b = 1\n")
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session, staged, update = await _staged(client, fake_llm, path, "code")
        assert staged == {"files": [path.as_uri()], "conflicts": []}
        assert path.read_text() == "b = 1\n"
        assert update["files"] == ["b.py"]

        await _next_prompt(client, session)
        [_, committed] = updates_of(client, session, "revert_update")
        assert (committed["state"], committed["scope"]) == ("committed", "code")
        history = await client.request("agent/session/history", {"sessionId": session})
        dropped = [e for e in history["events"] if e["type"] == "revert_committed"]
        assert dropped[0]["data"]["dropped"] == []
    sent = str(fake_llm.model_bodies()[-1]["messages"])
    assert "FIRST-PROMPT" in sent
    assert "wrote it" in sent
    assert "SECOND-PROMPT" in sent
    assert "The user rewound the code" in sent  # the model is told its change is gone
    assert path.read_text() == "b = 1\n"


async def test_revert_scope_conversation_hides_the_messages_and_keeps_the_files(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "b.py"
    path.write_text("b = 1\n")
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session, staged, update = await _staged(client, fake_llm, path, "conversation")
        assert staged == {"files": [], "conflicts": []}
        assert path.read_text() == "b = 2\n"
        assert update["files"] == []

        await _next_prompt(client, session)
    sent = str(fake_llm.model_bodies()[-1]["messages"])
    assert "FIRST-PROMPT" not in sent
    assert "wrote it" not in sent
    assert "SECOND-PROMPT" in sent
    assert path.read_text() == "b = 2\n"


async def test_an_unknown_revert_scope_is_invalid_params(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "b.py"
    path.write_text("b = 1\n")
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session, message_id = await _one_writing_turn(client, fake_llm, path)
        with pytest.raises(JsonRpcException) as info:
            await client.request(
                "agent/revert/stage",
                {"sessionId": session, "messageId": message_id, "scope": "files"},
            )
        assert info.value.code == -32602
        assert "scope" in str(info.value)
        assert path.read_text() == "b = 2\n"
