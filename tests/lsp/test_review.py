"""Issue 21, server side, end to end: the agent's changes become pending hunks the user keeps
or undoes (``agent/review/list`` / ``agent/review/resolve``), the model is told what was
undone, and the list survives a restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import AgentClient, agent_client, allow_once

LINES = [f"line_{n} = {n}\n" for n in range(1, 51)]
ORIGINAL = "".join(LINES)
FIRST_OLD, FIRST_NEW = "line_3 = 3", "line_3 = 'agent'"
SECOND_OLD, SECOND_NEW = "line_40 = 40", "line_40 = 'agent'"


def two_edits(path: Path) -> list[dict[str, Any]]:
    return [
        {"name": "edit", "input": {"file_path": str(path), "old_string": old, "new_string": new}}
        for old, new in ((FIRST_OLD, FIRST_NEW), (SECOND_OLD, SECOND_NEW))
    ]


def edited() -> str:
    return ORIGINAL.replace(FIRST_OLD, FIRST_NEW).replace(SECOND_OLD, SECOND_NEW)


async def review(client: AgentClient, session: str) -> list[dict[str, Any]]:
    result = await client.request("agent/review/list", {"sessionId": session})
    return list(result["files"])


async def resolve(client: AgentClient, session: str, action: str, hunks: list[str]) -> Any:
    params = {"sessionId": session, "action": action, "hunkIds": hunks}
    return await client.request("agent/review/resolve", params)


async def edited_session(client: AgentClient, path: Path) -> tuple[str, list[dict[str, Any]]]:
    """A session whose first turn edits ``path`` (open) in two distant places."""
    client.permission_answers += [allow_once(), allow_once()]
    session = await client.new_session()
    await client.prompt(session, "change lines 3 and 40")
    assert (await client.wait_idle(session))["stopReason"] == "end_turn"
    assert client.documents[path.as_uri()].text == edited()
    [file] = await review(client, session)
    return session, file["hunks"]


async def test_two_hunks_undo_one_keep_one_the_model_is_told_and_a_restart_keeps_them(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text(ORIGINAL)
    fake_llm.set_script(
        {"turns": [{"tool_calls": two_edits(path)}, {"text": "done"}, {"text": "fine"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, ORIGINAL)
        session, hunks = await edited_session(client, path)
        assert [h["status"] for h in hunks] == ["pending", "pending"]
        first, second = hunks
        assert (first["oldText"], first["newText"]) == (FIRST_OLD + "\n", FIRST_NEW + "\n")
        assert first["range"]["start"] == {"line": 2, "character": 0}
        assert second["range"]["start"] == {"line": 39, "character": 0}
        updates = [
            u["update"]
            for u in client.session_updates(session)
            if u["update"]["sessionUpdate"] == "review_update"
        ]
        assert updates
        assert updates[-1]["files"][0]["pending"] == 2

        undone = await resolve(client, session, "undo", [first["hunkId"]])
        assert undone == {"resolved": [first["hunkId"]], "conflicts": []}
        kept = await resolve(client, session, "keep", [second["hunkId"]])
        assert kept == {"resolved": [second["hunkId"]], "conflicts": []}
        # the undo went through the editor (applyEdit), then the disk followed the buffer
        expected = ORIGINAL.replace(SECOND_OLD, SECOND_NEW)
        assert client.documents[path.as_uri()].text == expected
        assert path.read_text() == expected

        await client.prompt(session, "anything else?")

        def second_idle(_u: dict[str, Any]) -> bool:
            states = [
                u["update"]
                for u in client.session_updates(session)
                if u["update"]["sessionUpdate"] == "state_update"
            ]
            return len([s for s in states if s["state"] == "idle"]) >= 2

        await client.wait_for(second_idle)
    body = json.dumps(fake_llm.model_bodies()[-1])
    assert "undid these hunks" in body
    assert "a.py, line 3" in body
    assert FIRST_NEW in body
    assert "line 40" not in body.split("undid these hunks", 1)[1].split("</review-update>")[0]

    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, expected)
        [file] = await review(client, session)
        assert file["status"] == "mixed"
        assert [(h["hunkId"], h["status"]) for h in file["hunks"]] == [
            (first["hunkId"], "undone"),
            (second["hunkId"], "kept"),
        ]


async def test_undoing_a_hunk_the_user_changed_since_is_a_conflict(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text(ORIGINAL)
    fake_llm.set_script({"turns": [{"tool_calls": two_edits(path)}, {"text": "done"}]})
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, ORIGINAL)
        session, [first, _second] = await edited_session(client, path)
        users = edited().replace(FIRST_NEW, "line_3 = 'user'")
        client.change(path, users)
        [file] = await review(client, session)
        assert file["hunks"][0]["range"] is None or file["hunks"][1]["range"] is None
        answer = await resolve(client, session, "undo", [first["hunkId"]])
        assert answer["resolved"] == []
        assert [c["hunkId"] for c in answer["conflicts"]] == [first["hunkId"]]
        assert client.documents[path.as_uri()].text == users


async def test_a_bash_change_to_a_closed_file_is_a_hunk_undone_on_disk(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "notes.txt"
    path.write_text("alpha\nbeta\ngamma\n")
    command = {"command": "sed -i 's/beta/BETA/' notes.txt", "description": "upper-case beta"}
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "bash", "input": command}]}, {"text": "done"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.permission_answers.append(allow_once())
        session = await client.new_session()
        await client.prompt(session, "upper-case beta")
        assert (await client.wait_idle(session))["stopReason"] == "end_turn"
        assert path.read_text() == "alpha\nBETA\ngamma\n"
        [file] = await review(client, session)
        assert file["uri"] == path.as_uri()
        [hunk] = file["hunks"]
        assert (hunk["oldText"], hunk["newText"]) == ("beta\n", "BETA\n")
        answer = await resolve(client, session, "undo", [hunk["hunkId"]])
        assert answer == {"resolved": [hunk["hunkId"]], "conflicts": []}
        assert client.applied_edits == []
    assert path.read_text() == "alpha\nbeta\ngamma\n"
