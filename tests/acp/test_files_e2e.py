"""A turn through the client's files, against the real ``lsp-agent acp`` and the fake LLM: the
model reads the client's unsaved text (``fs/read_text_file``), its edit is asked for
(``session/request_permission``, with the diff) and written through ``fs/write_text_file``
only, the disk untouched; the updates show each call with its kind, locations and diff."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp import text_block

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, RecordingClient, spawn_agent

DISK = "disk line\n"
UNSAVED = "unsaved line\n"
EDITED = "edited line\n"


def tool_result_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return json.dumps([block for block in content if block.get("type") == "tool_result"])


async def test_a_read_and_an_edit_go_through_the_clients_buffers(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    notes = ws / "notes.txt"
    notes.write_text(DISK)
    path = str(notes)
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "read", "input": {"file_path": path}}]},
                {
                    "tool_calls": [
                        {
                            "name": "edit",
                            "input": {
                                "file_path": path,
                                "old_string": "unsaved line",
                                "new_string": "edited line",
                            },
                        }
                    ]
                },
                {"text": "Edited it."},
            ]
        }
    )
    client = RecordingClient()
    client.buffers[path] = UNSAVED
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log", client=client) as agent:
        assert agent.init.agent_capabilities is not None
        assert agent.init.agent_capabilities.load_session
        async with asyncio.timeout(TIMEOUT):
            session = await agent.conn.new_session(cwd=str(ws), mcp_servers=[])
            sid = session.session_id
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("fix notes")])
        assert answer.stop_reason == "end_turn", agent.log()
    agent.assert_clean_exit()

    requests = [r for r in fake_llm.requests if r.turn != "side"]
    assert len(requests) == 3
    seen = tool_result_text(requests[1].body)
    assert "unsaved line" in seen
    assert "disk line" not in seen
    assert path in client.reads

    # the edit: asked with its diff, written to the client's buffer only
    [ask] = client.permissions
    assert ask.session_id == sid
    assert {"type": "diff", "path": path, "oldText": UNSAVED, "newText": EDITED} in ask.tool_call[
        "content"
    ]
    assert {o["kind"] for o in ask.options} >= {"allow_once", "allow_always", "reject_once"}
    assert client.writes == [(path, EDITED)]
    assert client.buffers[path] == EDITED
    assert notes.read_text() == DISK

    starts = client.of_kind(sid, "tool_call")
    assert [s["kind"] for s in starts] == ["read", "edit"]
    for start in starts:  # once its input is known, each call names the file
        located = [
            u["locations"]
            for u in client.updates[sid]
            if u.get("toolCallId") == start["toolCallId"] and "locations" in u
        ]
        assert located
        assert located[0] == [{"path": path}]
    edit_id = starts[1]["toolCallId"]
    done = [
        u
        for u in client.of_kind(sid, "tool_call_update")
        if u["toolCallId"] == edit_id and u.get("status") == "completed"
    ]
    [finished] = done
    assert {"type": "diff", "path": path, "oldText": UNSAVED, "newText": EDITED} in finished[
        "content"
    ]
    chunks = "".join(u["content"]["text"] for u in client.of_kind(sid, "agent_message_chunk"))
    assert chunks == "Edited it."
    # the context gauge after each model answer, and the generated title
    usage = client.of_kind(sid, "usage_update")
    assert usage
    assert usage[-1]["used"] > 0
    assert usage[-1]["size"] > usage[-1]["used"]
    titles = [u["title"] for u in client.of_kind(sid, "session_info_update")]
    assert "Test title" in titles


async def test_a_patch_writes_new_and_moved_files_through_the_client_and_removes_on_disk(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    (ws / "a.txt").write_text("a on disk\n")
    (ws / "m.txt").write_text("m one\n")
    (ws / "gone.txt").write_text("bye\n")
    patch = "\n".join(
        [
            "*** Begin Patch",
            "*** Add File: new.txt",
            "+brand new",
            "*** Update File: a.txt",
            "@@",
            "-a unsaved",
            "+a patched",
            "*** Update File: m.txt",
            "*** Move to: moved.txt",
            "@@",
            "-m one",
            "+m two",
            "*** Delete File: gone.txt",
            "*** End Patch",
        ]
    )
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "apply_patch", "input": {"patch": patch}}]},
                {"text": "Patched."},
            ]
        }
    )
    client = RecordingClient()
    client.buffers[str(ws / "a.txt")] = "a unsaved\n"
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log", client=client) as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("patch")])
        assert answer.stop_reason == "end_turn", agent.log()
    agent.assert_clean_exit()
    result = tool_result_text([r for r in fake_llm.requests if r.turn != "side"][1].body)
    assert '"is_error": true' not in result, result

    assert sorted(client.writes) == sorted(
        [
            (str(ws / "new.txt"), "brand new\n"),
            (str(ws / "a.txt"), "a patched\n"),
            (str(ws / "moved.txt"), "m two\n"),
        ]
    )
    # nothing written on disk; the removals (no ACP equivalent) are done there
    assert (ws / "a.txt").read_text() == "a on disk\n"
    assert not (ws / "new.txt").exists()
    assert not (ws / "moved.txt").exists()
    assert not (ws / "m.txt").exists()
    assert not (ws / "gone.txt").exists()
    [ask] = client.permissions
    assert {"type": "diff", "path": str(ws / "new.txt"), "newText": "brand new\n"} in ask.tool_call[
        "content"
    ]
