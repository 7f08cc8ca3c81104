"""Issue 37 §3 and §2 over the protocol: a reason on undo and a comment on a kept hunk reach
the model as the start of the next prompt (path:line, the hunk's first lines, the words);
"Send comments" sends them as a prompt of their own; ``agent/commitMessage`` answers from the
staged diff."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.lsp.test_review import (
    FIRST_NEW,
    ORIGINAL,
    SECOND_NEW,
    edited_session,
    review,
    two_edits,
)
from tests.support.git_history import commit_history, git
from tests.support.lsp_client import AgentClient, agent_client
from tests.support.model_requests import last_user_text


def idle_count(client: AgentClient, session: str) -> int:
    return len(
        [
            u
            for u in client.session_updates(session)
            if u["update"]["sessionUpdate"] == "state_update" and u["update"]["state"] == "idle"
        ]
    )


async def test_a_reason_and_a_comment_open_the_next_prompt_once(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text(ORIGINAL)
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": two_edits(path)},
                {"text": "done"},
                {"text": "will do"},
                {"text": "ok"},
            ]
        }
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, ORIGINAL)
        session, [first, second] = await edited_session(client, path)
        undone = await client.request(
            "agent/review/resolve",
            {
                "sessionId": session,
                "action": "undo",
                "hunkIds": [first["hunkId"]],
                "reason": "line 3 must stay a number",
            },
        )
        assert undone["resolved"] == [first["hunkId"]]
        await client.request(
            "agent/review/resolve",
            {"sessionId": session, "action": "keep", "hunkIds": [second["hunkId"]]},
        )
        made = await client.request(
            "agent/review/comment",
            {"sessionId": session, "hunkId": second["hunkId"], "text": "name it LIMIT"},
        )
        assert made["commentId"].startswith("cmt_")
        listed = await client.request("agent/review/list", {"sessionId": session})
        assert listed["unsentComments"] == 2
        comments = {h["hunkId"]: h["comments"] for h in listed["files"][0]["hunks"]}
        assert comments[first["hunkId"]] == [
            {
                "commentId": comments[first["hunkId"]][0]["commentId"],
                "text": "line 3 must stay a number",
                "action": "undo",
                "sent": False,
            }
        ]
        assert [c["text"] for c in comments[second["hunkId"]]] == ["name it LIMIT"]

        await client.prompt(session, "go on")
        await client.wait_for(lambda _u: idle_count(client, session) >= 2)
        sent = fake_llm.model_bodies()[-1]
        [file] = await review(client, session)
        assert all(c["sent"] for h in file["hunks"] for c in h["comments"])

        await client.prompt(session, "and now?")
        await client.wait_for(lambda _u: idle_count(client, session) >= 3)
        later = fake_llm.model_bodies()[-1]

    text = last_user_text(sent)
    assert text.startswith("My comments on your changes:")
    assert "a.py:3\n```\nline_3 = 'agent'\n```\nUndone, because: line 3 must stay a number" in text
    assert f"a.py:40\n```\n{SECOND_NEW}\n```\nComment: name it LIMIT" in text
    assert text.rstrip().endswith("go on")
    assert FIRST_NEW in text
    # sent once: the next prompt is the user's words alone
    assert last_user_text(later).strip() == "and now?"


async def test_send_comments_is_a_prompt_of_its_own_and_a_second_send_sends_nothing(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text(ORIGINAL)
    fake_llm.set_script(
        {"turns": [{"tool_calls": two_edits(path)}, {"text": "done"}, {"text": "fixed"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(path, ORIGINAL)
        session, [first, _second] = await edited_session(client, path)
        await client.request(
            "agent/review/comment",
            {"sessionId": session, "hunkId": first["hunkId"], "text": "quote style"},
        )
        sent = await client.request("agent/review/sendComments", {"sessionId": session})
        assert sent["sent"] == 1
        assert sent["userMessageId"].startswith("msg_")
        await client.wait_for(lambda _u: idle_count(client, session) >= 2)
        again = await client.request("agent/review/sendComments", {"sessionId": session})
        assert again == {"userMessageId": None, "queued": False, "sent": 0}
        with pytest.raises(JsonRpcException) as unknown:
            await client.request(
                "agent/review/comment",
                {"sessionId": session, "hunkId": "hnk_nope", "text": "x"},
            )
        assert unknown.value.code == -32602
    text = last_user_text(fake_llm.model_bodies()[-1])
    assert text == (
        f"My comments on your changes:\n\na.py:3\n```\n{FIRST_NEW}\n```\nComment: quote style"
    )


async def test_commit_message_request_answers_from_the_staged_diff(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    commit_history(workspace, ["docs: readme", "fix(io): flush", "feat: start"])
    fake_llm.set_script(
        {"side_requests_use_script": True, "turns": [{"text": "feat(greet): say hello"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        with pytest.raises(JsonRpcException) as nothing:
            await client.request("agent/commitMessage", {"uri": workspace.as_uri()})
        assert "nothing staged" in nothing.value.message
        assert nothing.value.code == -32602  # the person's to fix (stage), not the agent's
        (workspace / "greet.py").write_text("print('hello')\n")
        git(workspace, "add", "greet.py")
        answer = await client.request("agent/commitMessage", {})
        with pytest.raises(JsonRpcException) as outside:
            await client.request("agent/commitMessage", {"uri": "file:///"})
        assert outside.value.code == -32602
    assert answer == {"message": "feat(greet): say hello"}
    asked = last_user_text(fake_llm.requests[-1].body)
    assert "+print('hello')" in asked
    assert "Conventional Commits" in asked
