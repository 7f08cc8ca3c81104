"""Issue 37 §5 and §6 over the language server: a prompt's ``until`` keeps the session working
until the command passes (each check an ``until_update``); an ``image`` block and an ``@shot.png``
link reach the model as images; a model that takes none refuses the prompt."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from lsp_agent.core.uris import file_uri
from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.images import PNG
from tests.support.lsp_client import agent_client

B64 = base64.b64encode(PNG).decode()
# Fails the first time it runs, passes the second: the agent need not change anything.
CHECK = "n=$(cat runs 2>/dev/null || echo 0); echo $((n + 1)) > runs; echo run $n; test $n -ge 1"


def until_updates(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u["update"] for u in updates if u["update"]["sessionUpdate"] == "until_update"]


def images_sent(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block["source"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "image"
    ]


async def test_a_prompt_with_until_works_until_the_command_passes(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    fake_llm.set_script({"turns": [{"text": "First try."}, {"text": "Second try."}]})
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session = await client.new_session()
        await client.prompt(session, "make it pass", until={"command": CHECK, "maxAttempts": 3})
        passed = await client.wait_for(
            lambda u: (
                u["update"].get("sessionUpdate") == "until_update"
                and u["update"]["verdict"] != "retry"
            ),
            timeout=60,
        )
        await client.wait_idle(session)
        checks = until_updates(client.session_updates(session))
    assert passed["update"]["verdict"] == "passed"
    assert [(c["attempt"], c["maxAttempts"], c["verdict"], c["exitCode"]) for c in checks] == [
        (1, 3, "retry", 1),
        (2, 3, "passed", 0),
    ]
    bodies = fake_llm.model_bodies()
    assert len(bodies) == 2
    failure = str(bodies[1]["messages"][-1]["content"])
    assert "still fails after your turn (attempt 1 of 3)" in failure
    assert "run 0" in failure


async def test_an_until_without_a_command_is_invalid_params(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session = await client.new_session()
        with pytest.raises(JsonRpcException) as bad:
            await client.prompt(session, "go", until={"command": "  "})
    assert bad.value.code == -32602
    assert "until" in bad.value.message


async def test_an_image_block_and_an_image_link_reach_the_model(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    fake_llm.set_script({"turns": [{"text": "Two red dots."}]})
    prompt = [
        {"type": "text", "text": "compare these"},
        {"type": "image", "mimeType": "image/png", "data": B64, "name": "pasted.png"},
        {"type": "resource_link", "uri": file_uri(str(workspace / "shot.png"))},
    ]
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session = await client.new_session()
        await client.request("agent/session/prompt", {"sessionId": session, "prompt": prompt})
        await client.wait_idle(session)
        shown = await client.request(
            "agent/session/export", {"sessionId": session, "format": "markdown"}
        )
    [body] = fake_llm.model_bodies()
    assert images_sent(body) == [{"type": "base64", "media_type": "image/png", "data": B64}] * 2
    text = str(body["messages"][-1]["content"])
    assert f"[image: pasted.png (image/png, {len(PNG):,} bytes)]" in text
    assert f"[image: shot.png (image/png, {len(PNG):,} bytes)]" in text
    assert "[image: pasted.png" in shown["text"]
    assert B64 not in shown["text"]


async def test_an_image_for_a_model_that_takes_none_is_refused_naming_it(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    env = {**server_env, "LSP_AGENT_MODEL": "anthropic/claude-3-5-haiku"}
    prompt = [
        {"type": "text", "text": "look"},
        {"type": "image", "mimeType": "image/png", "data": B64},
    ]
    async with agent_client(env=env, folders=[workspace]) as client:
        session = await client.new_session()
        with pytest.raises(JsonRpcException) as refused:
            await client.request("agent/session/prompt", {"sessionId": session, "prompt": prompt})
    assert refused.value.code == -32602
    assert "anthropic/claude-3-5-haiku does not take images" in refused.value.message
    assert fake_llm.model_bodies() == []
