"""Permission over ACP, against the real ``lsp-agent acp``: a reject carries the user's reason
to the model; "Reject for this session" (``reject_always``) rejects the same asks of that
session without asking again (for ``edit``: every edit); a reject without a reason ends the
turn as a refusal; a cancelled request is a reject that ends it as cancelled.
Nothing is written or run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp import text_block

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, RecordingClient, spawn_agent


def edit(path: Path, old: str, new: str) -> dict[str, Any]:
    call = {"name": "edit", "input": {"file_path": str(path), "old_string": old, "new_string": new}}
    return {"tool_calls": [call]}


def last_result(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"][-1]["content"])


async def test_rejects_reasons_session_rejects_and_cancelled_asks(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    target = ws / "t.txt"
    target.write_text("one\n")
    other = ws / "new.txt"
    touch = {"name": "bash", "input": {"command": f"touch {other}"}}
    fake_llm.set_script(
        {
            "turns": [
                edit(target, "one", "two"),  # rejected with a reason: the turn goes on
                edit(target, "one", "three"),  # rejected for the session: the turn ends
                edit(target, "one", "four"),  # (next prompt) rejected without asking
                {"tool_calls": [touch]},  # the ask is cancelled: the turn ends
                {"text": "Still here."},
            ]
        }
    )
    client = RecordingClient(answers=[("reject_once", "keep it as one"), "reject_always", None])
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log", client=client) as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            stops = [
                (await agent.conn.prompt(session_id=sid, prompt=[text_block(text)])).stop_reason
                for text in ("edit it", "again", "are you there?")
            ]
        # a reject without a reason ends the turn as refused; a dismissed ask as cancelled
        assert stops == ["refusal", "cancelled", "end_turn"], agent.log()
    agent.assert_clean_exit()

    assert [p.answer for p in client.permissions] == ["reject_once", "reject_always", None]
    kinds = {o["kind"]: o for o in client.permissions[0].options}
    assert set(kinds) == {"allow_once", "allow_always", "reject_once", "reject_always"}
    assert kinds["reject_always"]["_meta"] == {"lspAgent": {"scope": "session"}}
    assert f"touch {other}" in json.dumps(client.permissions[2].tool_call)
    assert client.writes == []
    assert target.read_text() == "one\n"
    assert not other.exists()

    bodies = [r.body for r in fake_llm.requests if r.turn != "side"]
    assert len(bodies) == 5
    assert "keep it as one" in last_result(bodies[1])
    assert "rejected this for the session" in last_result(bodies[3])


async def test_a_reject_without_a_reason_ends_the_turn_as_a_refusal_the_model_reads(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    target = ws / "t.txt"
    target.write_text("one\n")
    fake_llm.set_script(
        {"turns": [edit(target, "one", "two"), {"text": "Understood, I left it alone."}]}
    )
    client = RecordingClient(answers=["reject_once"])
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log", client=client) as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            first = await agent.conn.prompt(session_id=sid, prompt=[text_block("edit it")])
            second = await agent.conn.prompt(session_id=sid, prompt=[text_block("why not?")])
        assert (first.stop_reason, second.stop_reason) == ("refusal", "end_turn"), agent.log()
    agent.assert_clean_exit()

    assert target.read_text() == "one\n"
    bodies = [r.body for r in fake_llm.requests if r.turn != "side"]
    assert len(bodies) == 2  # the refused turn made no further request
    sent = json.dumps(bodies[1]["messages"])
    assert "The user rejected permission to use this specific tool call." in sent
    assert "edit it" in sent
