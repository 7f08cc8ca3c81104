"""Saved approvals over the protocol, against the real server (issue 31 point 6): the
permission request names what "always" saves (``always`` and the option names), "always" on
``git 'c*' --help`` does not let ``git clean -fdx`` run unasked, ``agent/permissions/list``
shows the project's approval after its session is deleted, and ``agent/permissions/revoke``
takes it back, so the same command is asked again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import agent_client, reject


def _bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "input": {"command": command}}]}


def _always(params: dict[str, Any]) -> dict[str, Any]:
    option = next(o for o in params["options"] if o["kind"] == "allow_always")
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


async def test_always_saves_what_was_shown_and_the_project_lists_and_revokes_it(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    folder = Path(os.path.realpath(workspace)).as_uri()
    fake_llm.set_script(
        {
            "turns": [
                _bash("git 'c*' --help"),
                _bash("git clean -fdx"),
                {"text": "First."},
                _bash("git 'c*' --help"),
                {"text": "Second."},
            ]
        }
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.permission_answers = [_always, reject("no"), reject("no")]
        first = await client.new_session(workspaceFolder=folder)
        await client.prompt(first, "go")
        await client.wait_idle(first)

        asked, cleaned = client.permission_requests
        assert asked["always"] == ["git c[*] *"]
        names = {o["kind"]: o["name"] for o in asked["options"]}
        assert names["allow_always"] == "Always allow in this project: bash git c[*] *"
        assert cleaned["patterns"] == ["git clean -fdx"]  # asked: the approval is literal

        await client.request("agent/session/delete", {"sessionId": first})
        listed = await client.request("agent/permissions/list", {"workspaceFolder": folder})
        (approval,) = listed["approvals"]
        assert (approval["scope"], approval["scopeId"]) == ("project", folder)
        assert (approval["permission"], approval["pattern"]) == ("bash", "git c[*] *")
        assert approval["sessionId"] == first

        revoke = {k: approval[k] for k in ("scope", "scopeId", "permission", "pattern")}
        assert await client.request("agent/permissions/revoke", revoke) == {"revoked": True}
        assert await client.request("agent/permissions/revoke", revoke) == {"revoked": False}
        assert await client.request("agent/permissions/list", {}) == {"approvals": []}

        second = await client.new_session(workspaceFolder=folder)
        await client.prompt(second, "again")
        await client.wait_idle(second)
        assert len(client.permission_requests) == 3  # revoked: asked again
        assert client.permission_requests[2]["patterns"] == ["git c* --help"]
