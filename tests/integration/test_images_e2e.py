"""Images end to end through ``lsp-agent run --file shot.png``: the fake Anthropic and OpenAI
endpoints receive them in their own wire formats; a model whose catalogue entry takes no images
refuses the prompt naming the model; the transcript and exports show a placeholder."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm
from tests.support.images import PNG
from tests.support.provider_env import provider_env

KEY = "sk-images-SECRET-5151"


B64 = base64.b64encode(PNG).decode()


@pytest.fixture
def workspace(workspace: Path) -> Path:
    (workspace / "shot.png").write_bytes(PNG)
    return workspace


def session_of(stderr: str) -> str:
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("session "), stderr
    return last.split()[1]


def test_an_image_reaches_the_anthropic_endpoint_as_a_base64_image_block(
    workspace: Path,
) -> None:
    with running_fake_llm([{"text": "A red dot."}]) as server:
        result = run_cli(
            "run", "--model", "anthropic/claude-test", "--file", "shot.png", "what is this?",
            cwd=workspace, env=provider_env(server, KEY),
        )  # fmt: skip
        bodies = server.model_bodies()
    assert result.returncode == 0, result.stderr
    content = bodies[0]["messages"][-1]["content"]
    images = [
        {key: value for key, value in block.items() if key != "cache_control"}  # the prefix's end
        for block in content
        if block["type"] == "image"
    ]
    assert images == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}}
    ]
    texts = [block["text"] for block in content if block["type"] == "text"]
    assert texts[0] == "what is this?"
    assert f"[image: shot.png (image/png, {len(PNG):,} bytes)]" in texts

    # Where text is needed, the image is its placeholder, never its bytes.
    session_id = session_of(result.stderr)
    for args in (("show", session_id), ("export", session_id)):
        shown = run_cli("sessions", *args, cwd=workspace)
        assert shown.returncode == 0, shown.stderr
        assert "[image: shot.png" in shown.stdout
        assert B64 not in shown.stdout
    # The JSON export is the whole log: the image as it was sent, the transcript's placeholder.
    exported = run_cli("sessions", "export", session_id, "--format", "json", cwd=workspace)
    assert exported.returncode == 0, exported.stderr
    assert B64 in exported.stdout
    assert "[image: shot.png" in exported.stdout
    # search finds the message by the image's name, never by its bytes
    found = run_cli("sessions", "search", "shot.png", "--json", cwd=workspace)
    assert found.returncode == 0, found.stderr
    assert session_id in found.stdout
    assert B64[:40] not in found.stdout


def test_an_image_reaches_the_openai_endpoint_as_an_image_url_part(workspace: Path) -> None:
    with running_fake_llm([{"text": "A red dot."}]) as server:
        result = run_cli(
            "run", "--model", "openai/gpt-4o", "--file", "shot.png", "what is this?",
            cwd=workspace, env=provider_env(server, KEY, "openai"),
        )  # fmt: skip
        bodies = server.model_bodies()
    assert result.returncode == 0, result.stderr
    user = bodies[0]["messages"][-1]
    assert user["role"] == "user"
    assert user["content"][0] == {"type": "text", "text": "what is this?"}
    assert {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}} in user[
        "content"
    ]


def test_the_image_is_sent_again_on_the_next_turn(workspace: Path) -> None:
    script = [{"text": "A red dot."}, {"text": "Still red."}]
    with running_fake_llm(script) as server:
        env = provider_env(server, KEY)
        first = run_cli(
            "run", "--model", "anthropic/claude-test", "--file", "shot.png", "what is this?",
            cwd=workspace, env=env,
        )  # fmt: skip
        assert first.returncode == 0, first.stderr
        again = run_cli(
            "run", "--model", "anthropic/claude-test", "--continue", "and now?",
            cwd=workspace, env=env,
        )  # fmt: skip
        assert again.returncode == 0, again.stderr
        bodies = server.model_bodies()
    first_user = bodies[1]["messages"][0]["content"]
    sent = [block["source"] for block in first_user if block["type"] == "image"]
    assert sent == [{"type": "base64", "media_type": "image/png", "data": B64}]


def test_a_model_that_takes_no_images_refuses_the_prompt_naming_it(workspace: Path) -> None:
    with running_fake_llm([{"text": "never"}]) as server:
        result = run_cli(
            "run", "--model", "anthropic/claude-3-5-haiku", "--file", "shot.png", "look",
            cwd=workspace, env=provider_env(server, KEY),
        )  # fmt: skip
        bodies = server.model_bodies()
    assert result.returncode == 2, result.stderr
    assert "anthropic/claude-3-5-haiku does not take images" in result.stderr
    assert bodies == []
    listed = run_cli("sessions", "list", "--json", cwd=workspace)
    assert json.loads(listed.stdout) in ([], {"sessions": []}), listed.stdout


def test_a_file_named_like_an_image_that_is_not_one_is_refused(workspace: Path) -> None:
    (workspace / "fake.png").write_text("not an image\n")
    result = run_cli("run", "--model", "anthropic/claude-test", "--file", "fake.png", "look",
                     cwd=workspace)  # fmt: skip
    assert result.returncode == 2
    assert "--file fake.png: not a PNG, JPEG, GIF or WebP image" in result.stderr
