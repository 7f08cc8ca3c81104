"""ACP sessions are stored sessions: one made in a first ``lsp-agent acp`` is listed by
``session/list`` in a second process, and ``session/load`` there replays its conversation as
``session/update`` notifications before the load's answer; the CLI lists it too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import text_block
from acp.exceptions import RequestError

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, spawn_agent


async def test_a_session_is_listed_and_replayed_by_a_new_process(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    (ws / "a.txt").write_text("alpha\n")
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "read", "input": {"file_path": str(ws / "a.txt")}}]},
                {"thinking": "the file says alpha", "text": "It says kumquat-alpha."},
                {"text": "Resumed."},
            ]
        }
    )
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "first.log") as first:
        async with asyncio.timeout(TIMEOUT):
            sid = (await first.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            answer = await first.conn.prompt(
                session_id=sid, prompt=[text_block("what does a.txt say, kumquat?")]
            )
        assert answer.stop_reason == "end_turn", first.log()
        live_calls = first.client.of_kind(sid, "tool_call")
    first.assert_clean_exit()

    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "second.log") as second:
        client = second.client
        async with asyncio.timeout(TIMEOUT):
            listed = await second.conn.list_sessions(cwd=str(ws))
            assert [s.session_id for s in listed.sessions] == [sid]
            assert listed.sessions[0].cwd == str(ws)
            loaded = await second.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        assert loaded is not None
        before = [
            m["params"]["update"]
            for m in client.received_before(client.sent_id("session/load"))
            if m.get("method") == "session/update" and m["params"]["sessionId"] == sid
        ]
        kinds = [u["sessionUpdate"] for u in before]
        assert "user_message_chunk" in kinds
        user = "".join(
            u["content"].get("text", "")
            for u in before
            if u["sessionUpdate"] == "user_message_chunk"
        )
        assert user == "what does a.txt say, kumquat?"
        assert kinds.index("user_message_chunk") < kinds.index("tool_call")
        assert kinds.index("tool_call") < kinds.index("agent_message_chunk")
        said = "".join(
            u["content"]["text"] for u in before if u["sessionUpdate"] == "agent_message_chunk"
        )
        assert said == "It says kumquat-alpha."
        thought = "".join(
            u["content"]["text"] for u in before if u["sessionUpdate"] == "agent_thought_chunk"
        )
        assert thought == "the file says alpha"
        [replayed_call] = [u for u in before if u["sessionUpdate"] == "tool_call"]
        assert replayed_call["toolCallId"] == live_calls[0]["toolCallId"]
        assert replayed_call["kind"] == "read"
        # the commands come after the answer
        assert "available_commands_update" not in kinds
        await client.wait_for(lambda: bool(client.of_kind(sid, "available_commands_update")))

        # closed, it takes no prompt; resumed (no replay this time), it goes on
        async with asyncio.timeout(TIMEOUT):
            await second.conn.close_session(session_id=sid)
            with pytest.raises(RequestError) as closed:
                await second.conn.prompt(session_id=sid, prompt=[text_block("still there?")])
            assert closed.value.code == -32002
            seen = len(client.updates[sid])
            await second.conn.resume_session(cwd=str(ws), session_id=sid, mcp_servers=[])
            replayed = [
                u["sessionUpdate"]
                for u in client.updates[sid][seen:]
                if u["sessionUpdate"] != "available_commands_update"
            ]
            assert replayed == []
            answer = await second.conn.prompt(session_id=sid, prompt=[text_block("go on")])
        assert answer.stop_reason == "end_turn", second.log()
        resumed = [r for r in fake_llm.requests if r.turn != "side"][-1].body
        assert "kumquat-alpha" in json.dumps(resumed["messages"])
    second.assert_clean_exit()

    listed_by_cli = run_cli("sessions", "list", "--json", cwd=ws, env=acp_env, timeout=60)
    assert listed_by_cli.returncode == 0, listed_by_cli.stderr
    assert sid in json.dumps(json.loads(listed_by_cli.stdout))
