"""ACP permission options against the real ``lsp-agent acp`` (issue 31 point 6): at most one
option per kind (a client that picks "the" always option by key cannot pick a wider scope than
it shows), and "always" from an ACP client means this session, saying so and the exact
pattern in its name: the same command runs unasked in that session, and is asked again in the
next one."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from acp import text_block

from lsp_agent.app import open_data_store
from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, RecordingClient, spawn_agent


async def _saved_scopes() -> list[tuple[str, str, str]]:
    store = await open_data_store(os.environ)
    try:
        return [(a.scope, a.permission, a.pattern) for a in await store.saved_approvals()]
    finally:
        await store.close()


async def test_one_option_per_kind_and_always_is_this_session(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    git = {"tool_calls": [{"name": "bash", "input": {"command": "git 'c*' --help"}}]}
    fake_llm.set_script(
        {"turns": [git, {"text": "One."}, git, {"text": "Two."}, git, {"text": "Three."}]}
    )
    client = RecordingClient(answers=["allow_always", ("reject_once", "not now")])
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log", client=client) as agent:
        async with asyncio.timeout(TIMEOUT):
            first = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            for text in ("run it", "run it again"):
                await agent.conn.prompt(session_id=first, prompt=[text_block(text)])
            second = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            await agent.conn.prompt(session_id=second, prompt=[text_block("and here")])
    agent.assert_clean_exit()

    # asked once in the first session (the second call ran on the saved answer), again in
    # the second session: "always" was this session's
    assert [p.session_id for p in client.permissions] == [first, second], agent.log()
    options = client.permissions[0].options
    kinds = [o["kind"] for o in options]
    assert sorted(kinds) == ["allow_always", "allow_once", "reject_always", "reject_once"]
    (always,) = [o for o in options if o["kind"] == "allow_always"]
    assert always["name"] == "Always allow in this session: bash git c[*] *"
    assert always["_meta"] == {"lspAgent": {"scope": "session"}}
    assert await _saved_scopes() == [("session", "bash", "git c[*] *")]
