"""A ``session/prompt``'s content blocks, against the real ``lsp-agent acp``: an embedded text
``resource`` reaches the model as given; a ``resource_link`` to a workspace file is read at
admission through the client (``fs/read_text_file``), so the model gets the unsaved buffer;
an image block (``promptCapabilities.image``) reaches the model as an image; a model whose
catalogue entry takes no images refuses the prompt, naming the model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import (
    RequestError,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)

from lsp_agent.core.uris import file_uri
from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, RecordingClient, spawn_agent

PNG_MAGIC = "iVBORw0KGgo="
"""A PNG's first 8 bytes, base64: an image as far as its type goes."""


async def test_embedded_resources_links_and_images_as_the_model_gets_them(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    linked = ws / "linked.py"
    linked.write_text("ON_DISK = 1\n")
    fake_llm.set_script({"turns": [{"text": "Seen."}]})
    client = RecordingClient()
    client.buffers[str(linked)] = "UNSAVED_IN_BUFFER = 2\n"
    embedded = embedded_text_resource(file_uri(str(ws / "notes.md")), "EMBEDDED-TEXT-5521")
    prompt = [
        text_block("look at these"),
        resource_block(embedded),
        resource_link_block(name="linked.py", uri=file_uri(str(linked))),
        image_block(PNG_MAGIC, "image/png", uri=file_uri(str(ws / "shot.png"))),
    ]
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log", client=client) as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            answer = await agent.conn.prompt(session_id=sid, prompt=prompt)
        assert answer.stop_reason == "end_turn", agent.log()
    agent.assert_clean_exit()
    [request] = [r for r in fake_llm.requests if r.turn != "side"]
    sent = json.dumps(request.body["messages"][-1])
    assert "look at these" in sent
    assert "EMBEDDED-TEXT-5521" in sent
    assert "UNSAVED_IN_BUFFER = 2" in sent
    assert "ON_DISK" not in sent
    assert str(linked) in client.reads
    images = [b for b in request.body["messages"][-1]["content"] if b["type"] == "image"]
    assert [b["source"] for b in images] == [
        {"type": "base64", "media_type": "image/png", "data": PNG_MAGIC}
    ]
    assert "[image: shot.png (image/png, 8 bytes)]" in sent


async def test_an_image_for_a_model_that_takes_none_is_refused_naming_it(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    env = {**acp_env, "LSP_AGENT_MODEL": "anthropic/claude-3-5-haiku"}
    fake_llm.set_script({"turns": [{"text": "never"}]})
    async with spawn_agent(env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            with pytest.raises(RequestError) as refused:
                await agent.conn.prompt(
                    session_id=sid,
                    prompt=[text_block("look"), image_block(PNG_MAGIC, "image/png")],
                )
    agent.assert_clean_exit()
    assert refused.value.code == -32602
    assert "anthropic/claude-3-5-haiku does not take images" in str(refused.value.data or "") + str(
        refused.value
    )
    assert [r for r in fake_llm.requests if r.turn != "side"] == []
