"""ACP's ``/review`` (issue 37 §1), against the real ``lsp-agent acp``: offered in
``available_commands_update``; it reviews the session folder's git changes on the fake model,
whose ``report_finding`` call comes back as a ``path:line: severity: message`` line; the
conversation itself is unchanged (a side request, no turn)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import text_block

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, spawn_agent
from tests.support.hostile_repo import git

MESSAGE = "Divides by len - 1."


async def test_review_is_a_slash_command_that_answers_with_the_findings(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    path = ws / "stats.py"
    path.write_text("def mean(v):\n    return sum(v) / len(v)\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    path.write_text("def mean(v):\n    return sum(v) / (len(v) - 1)\n")
    finding = {"path": "stats.py", "line": 2, "severity": "error", "message": MESSAGE}
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "report_finding", "input": finding}]},
                {"text": "One bug."},
            ]
        }
    )
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
        client = agent.client
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            await client.wait_for(lambda: bool(client.of_kind(sid, "available_commands_update")))
            [commands] = client.of_kind(sid, "available_commands_update")
            offered = {c["name"]: c for c in commands["availableCommands"]}
            assert offered["review"]["input"] == {"hint": "--staged | --base REF"}
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("/review")])
            staged = await agent.conn.prompt(
                session_id=sid, prompt=[text_block("/review --staged")]
            )
            wrong = await agent.conn.prompt(session_id=sid, prompt=[text_block("/review now")])
        assert answer.stop_reason == "end_turn", agent.log()
        assert staged.stop_reason == "end_turn"
        assert wrong.stop_reason == "end_turn"
        said = [u["content"]["text"] for u in client.of_kind(sid, "agent_message_chunk")]
        assert said[0] == (
            "Review of the uncommitted changes: 1 finding.\n\n"
            f"- `stats.py:2: error: {MESSAGE}`\n\nOne bug."
        )
        assert said[1] == (
            "Review of the staged changes: 0 findings.\n\n"
            "No changes to review (the staged changes)."
        )
        assert said[2] == "/review takes --staged or --base REF, not 'now'."
        sent = str(fake_llm.model_bodies()[0]["messages"])
        assert "+    return sum(v) / (len(v) - 1)" in sent
        assert len(fake_llm.model_bodies()) == 2  # the review's two steps: no turn ran
    agent.assert_clean_exit()
