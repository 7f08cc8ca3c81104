"""``initialize`` is answered before the agent is built (issue 24): the store, recovery and
the provider come up right after, in the background. A request sent at once waits for them
and is answered; a client that supports work-done progress is shown "starting…"; a start
that fails is shown once and every request answers its reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.support.lsp_client import agent_client
from tests.support.waiting import wait_until

STARTING = "lsp-agent/starting"


async def test_a_request_sent_right_after_initialize_waits_for_the_agent_and_is_answered(
    workspace: Path, server_env: dict[str, str]
) -> None:
    async with agent_client(env=server_env, folders=[workspace]) as client:
        # sent at once: the agent is still being built, the request waits for it
        session = await client.new_session()
        listed = await client.request("agent/session/list", {})

        assert [s["sessionId"] for s in listed["sessions"]] == [session]
        await wait_until(lambda: STARTING in client.client.progress_reports)
        reports = client.client.progress_reports[STARTING]
        assert (reports[0].kind, reports[0].title, reports[0].message) == (
            "begin",
            "lsp-agent",
            "starting…",
        )
        await wait_until(lambda: reports[-1].kind == "end")
        assert reports[-1].message == "ready"
        assert client.client.messages == []


async def test_a_start_that_fails_is_shown_once_and_every_request_answers_why(
    workspace: Path, server_env: dict[str, str], tmp_path: Path
) -> None:
    not_a_folder = tmp_path / "data-is-a-file"
    not_a_folder.write_text("")
    env = {**server_env, "LSP_AGENT_DATA_DIR": str(not_a_folder)}
    async with agent_client(env=env, folders=[workspace]) as client:
        for _ in range(2):
            with pytest.raises(JsonRpcException) as info:
                await client.request("agent/session/list", {})
            assert str(not_a_folder) in str(info.value)

        await wait_until(lambda: bool(client.client.messages))
        [shown] = client.client.messages
        assert shown.message.startswith("lsp-agent failed to start: ")
        assert str(not_a_folder) in shown.message
        assert all(
            r[-1].message == "failed to start" for r in client.client.progress_reports.values()
        )
