"""``agent/nextEdit`` and ``agent/nextEdit/feedback`` over the real wire: the model is asked
with the document's recent edits, its one edit comes back as a narrow range in the version
asked about, a stale version gets nothing, and the user's answer is recorded in the folder's
session and told to the model at its next turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.lsp.test_inline_completion import answer, completion_config, fim_requests
from tests.support.lsp_client import agent_client
from tests.support.user_config import write_user_config

TEXT = "def load(uid):\n    return db.get(uid)\n"
RENAMED = "def load(user_id):\n    return db.get(uid)\n"
ANSWER = "EDIT 2-2\n    return db.get(user_id)\nEND\nREASON: rename uid → user_id\n"


def next_edit_params(path: Path, version: int) -> dict[str, Any]:
    return {
        "textDocument": {"uri": path.as_uri(), "version": version},
        "position": {"line": 0, "character": 17},
    }


async def test_a_next_edit_round_trip_and_the_feedback_reaches_the_next_turn(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    fake_llm.set_script(
        {"turns": [{"text": "noted"}], "completions": [{"text": ANSWER}, {"text": "NONE"}]}
    )
    write_user_config(completion_config(fake_llm))
    models = workspace / "models.py"
    models.write_text(TEXT)
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session = await client.new_session()
        client.open(models, TEXT)
        client.change(models, RENAMED)
        version = client.documents[models.as_uri()].version
        result = await client.request("agent/nextEdit", next_edit_params(models, version))
        assert result["uri"] == models.as_uri()
        assert result["range"] == {
            "start": {"line": 1, "character": 18},
            "end": {"line": 1, "character": 21},
        }
        assert result["newText"] == "user_id"
        assert result["reason"] == "rename uid → user_id"
        prompt = fim_requests(fake_llm)[0].body["prompt"]
        assert "`def load(uid):` → `def load(user_id):`" in prompt  # the recent edit
        assert "    2|     return db.get(uid)" in prompt  # the file, numbered

        stale = await client.request("agent/nextEdit", next_edit_params(models, version - 1))
        assert stale is None
        assert len(fim_requests(fake_llm)) == 1  # a stale version asks no model
        nothing = await client.request("agent/nextEdit", next_edit_params(models, version))
        assert nothing is None  # the model answered NONE

        client.notify("agent/nextEdit/feedback", {"id": result["id"], "accepted": True})
        client.notify("agent/nextEdit/feedback", {"id": "nxe_unknown", "accepted": False})

        async def recorded() -> list[dict[str, Any]]:
            history = await client.request("agent/session/history", {"sessionId": session})
            return [e for e in history["events"] if e["type"] == "suggestion_feedback"]

        for _ in range(200):  # a notification: recorded soon after
            if await recorded():
                break
            await asyncio.sleep(0.05)
        [event] = await recorded()
        assert event["data"]["accepted"] is True
        assert event["data"]["kind"] == "next_edit"
        assert event["data"]["line"] == 1

        await client.prompt(session, "go on")
        assert (await client.wait_idle(session))["stopReason"] == "end_turn"
    turn = next(r for r in fake_llm.requests if r.turn == 0)
    sent = str(turn.body["messages"])
    assert f"The user accepted the suggested edit at {models}:2 (rename uid → user_id)" in sent


async def test_an_accepted_inline_completion_is_recorded_in_the_folders_session(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    fake_llm.set_script({"completions": [{"text": "a + b"}]})
    write_user_config(completion_config(fake_llm))
    calc = workspace / "calc.py"
    text = "def add(a, b):\n    return \n"
    calc.write_text(text)
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session = await client.new_session()
        client.open(calc, text)
        [item] = await answer(client, calc, 1, 11, 1)
        [suggestion_id] = item.command.arguments  # what VS Code runs on accept
        client.notify("agent/nextEdit/feedback", {"id": suggestion_id, "accepted": True})
        for _ in range(200):
            history = await client.request("agent/session/history", {"sessionId": session})
            found = [e for e in history["events"] if e["type"] == "suggestion_feedback"]
            if found:
                break
            await asyncio.sleep(0.05)
        [event] = found
        assert event["data"]["kind"] == "inline"
        assert event["data"]["line"] == 1
        assert event["data"]["summary"] == "inserting 'a + b'"
