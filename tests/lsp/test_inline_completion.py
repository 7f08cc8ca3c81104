"""``textDocument/inlineCompletion`` over the real wire against the loopback fake's
``/v1/completions``: the capability only when enabled, ghost text at the cursor, quick typing
→ at most one completed model request and nothing stale, exclusions that reach no model, the
hourly cap with its status note, and the agent's task in the request the fake recorded."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcRequestCancelled

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import AgentClient, agent_client, allow_once
from tests.support.user_config import write_user_config


def completion_config(fake: FakeLLMServer, **completion: Any) -> dict[str, Any]:
    return {
        "providers": {"local": {"type": "openai-compatible", "base_url": fake.openai_base_url}},
        "agents": {"completion": {"model": "local/coder"}},
        "completion": {"enabled": True, "debounce_ms": 50, **completion},
    }


def fim_requests(fake: FakeLLMServer) -> list[Any]:
    return [r for r in fake.requests if r.path.endswith("/v1/completions")]


def ask(client: AgentClient, path: Path, line: int, character: int, msg_id: str) -> Any:
    """An inline completion request (its future; ``msg_id`` lets the test cancel it)."""
    params = lsp.InlineCompletionParams(
        text_document=lsp.TextDocumentIdentifier(uri=path.as_uri()),
        position=lsp.Position(line=line, character=character),
        context=lsp.InlineCompletionContext(trigger_kind=lsp.InlineCompletionTriggerKind.Automatic),
    )
    protocol: Any = client.client.protocol
    return protocol.send_request("textDocument/inlineCompletion", params, msg_id=msg_id)


def items(result: Any) -> list[Any]:
    if result is None:
        return []
    found = result.items if hasattr(result, "items") else result["items"]
    return list(found)


async def answer(client: AgentClient, path: Path, line: int, character: int, n: int) -> list[Any]:
    future = ask(client, path, line, character, f"ic-{n}")
    return items(await asyncio.wait_for(asyncio.wrap_future(future), 30))


async def test_ghost_text_from_the_fim_model_and_the_capability_only_when_enabled(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    async with agent_client(env=server_env, folders=[workspace]) as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.inline_completion_provider is None
    fake_llm.set_script({"completions": [{"text": "a + b"}]})
    write_user_config(completion_config(fake_llm))
    source = workspace / "calc.py"
    text = "def add(a, b):\n    return \n"
    source.write_text(text)
    async with agent_client(env=server_env, folders=[workspace]) as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.inline_completion_provider is not None
        client.open(source, text)
        found = await answer(client, source, 1, 11, 1)
        assert [item.insert_text for item in found] == ["a + b"]
        assert found[0].range == lsp.Range(
            start=lsp.Position(line=1, character=11), end=lsp.Position(line=1, character=11)
        )
        assert found[0].command.command == "lsp-agent.inlineCompletionAccepted"
        assert found[0].command.arguments
        assert isinstance(found[0].command.arguments[0], str)
        body = fim_requests(fake_llm)[0].body
        assert body["prompt"].endswith("def add(a, b):\n    return ")
        assert body["suffix"] == "\n"
        assert body["model"] == "coder"
        again = await answer(client, source, 1, 11, 2)  # the same text: from the cache
        assert [item.insert_text for item in again] == ["a + b"]
        assert len(fim_requests(fake_llm)) == 1


@pytest.mark.parametrize("client_cancels", [True, False])
async def test_ten_quick_keystrokes_make_at_most_one_completed_request_and_nothing_stale(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str], client_cancels: bool
) -> None:
    fake_llm.set_script({"completions": [{"text": "ghost", "delay": 0.3}]})
    write_user_config(completion_config(fake_llm, debounce_ms=80))
    source = workspace / "typing.py"
    source.write_text("")
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(source, "")
        typed = ""
        futures = []
        for n, char in enumerate("value = 1"[:9] + "0"):
            if futures and client_cancels:  # the editor cancels the previous request
                client.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=f"k-{n - 1}"))
            typed += char
            client.change(source, typed)
            futures.append((len(typed), ask(client, source, 0, len(typed), f"k-{n}")))
            await asyncio.sleep(0.02)
        outcomes = []
        for length, future in futures:
            try:
                found = items(await asyncio.wait_for(asyncio.wrap_future(future), 30))
            except JsonRpcRequestCancelled:  # a cancelled request is answered so
                assert client_cancels
                found = []
            outcomes.append((length, found))
        shown = [(length, [i.insert_text for i in found]) for length, found in outcomes if found]
        assert shown == [(len(typed), ["ghost"])]  # only the last version's
        await asyncio.sleep(0.5)  # anything still on its way ends
        completed = [r for r in fim_requests(fake_llm) if r.status == 200 and r.error is None]
        assert len(completed) <= 1
        # one more keystroke mid-request: its answer is dropped, never shown stale
        client.change(source, typed + "1")
        late = ask(client, source, 0, len(typed) + 1, "late")
        await asyncio.sleep(0.2)  # past the debounce: the model request is on its way
        client.change(source, typed + "12")
        assert items(await asyncio.wait_for(asyncio.wrap_future(late), 30)) == []


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".gitignore").write_text("build/\n")
    return workspace


async def test_excluded_files_reach_no_model(
    git_workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    workspace = git_workspace
    fake_llm.set_script({"completions": [{"text": "leak"}]})
    write_user_config(completion_config(fake_llm, exclude=["vendor/**"]))
    (workspace / "build").mkdir()
    (workspace / "vendor").mkdir()
    secret_key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4
    cases = {
        workspace / ".env": "TOKEN=",
        workspace / "build" / "gen.py": "x = ",
        workspace / "vendor" / "lib.py": "y = ",
        workspace / "settings.py": f'KEY = "{secret_key}"\nz = ',
    }
    async with agent_client(env=server_env, folders=[workspace]) as client:
        for n, (path, text) in enumerate(cases.items()):
            path.write_text(text)
            client.open(path, text)
            last = text.splitlines()[-1]
            line = len(text.splitlines()) - 1
            assert await answer(client, path, line, len(last), n) == [], path
        fine = workspace / "ok.py"
        client.open(fine, "w = ")
        assert [i.insert_text for i in await answer(client, fine, 0, 4, 9)] == ["leak"]
    sent = fim_requests(fake_llm)
    assert len(sent) == 1
    assert secret_key not in str(sent[0].body)


async def test_the_hourly_cap_answers_nothing_and_says_so_once(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    fake_llm.set_script({"completions": [{"text": "one", "prompt_tokens": 500}]})
    write_user_config(completion_config(fake_llm, max_tokens_per_hour=400))
    source = workspace / "cap.py"
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(source, "a = ")
        assert [i.insert_text for i in await answer(client, source, 0, 4, 1)] == ["one"]
        client.change(source, "a = b")
        assert await answer(client, source, 0, 5, 2) == []
        client.change(source, "a = bc")
        assert await answer(client, source, 0, 6, 3) == []
        assert len(fim_requests(fake_llm)) == 1
        logs = [m.message for m in client.client.log_messages]
        notes = [line for line in logs if "max_tokens_per_hour" in line]
        assert len(notes) == 1
        assert "paused" in notes[0]


async def test_the_request_carries_the_agents_plan_and_pending_hunks(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    models = workspace / "models.py"
    models.write_text("def load_user(uid):\n    return db.get(uid)\n")
    todos = [
        {"content": "Rename load_user to fetch_user everywhere", "status": "in_progress"},
        {"content": "Write the changelog entry", "status": "completed"},
    ]
    edit = {
        "file_path": str(models),
        "old_string": "def load_user(uid):",
        "new_string": "def fetch_user(uid):",
    }
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "todowrite", "input": {"todos": todos}}]},
                {"tool_calls": [{"name": "edit", "input": edit}]},
                {"text": "renamed the definition"},
            ],
            "completions": [{"text": "fetch_user(uid)"}],
        }
    )
    write_user_config(completion_config(fake_llm))
    caller = workspace / "views.py"
    text = "from models import fetch_user\n\nuser = "
    caller.write_text(text)
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.permission_answers.append(allow_once())
        session = await client.new_session()
        await client.prompt(session, "rename load_user to fetch_user")
        assert (await client.wait_idle(session))["stopReason"] == "end_turn"
        client.open(caller, text)
        found = await answer(client, caller, 2, 7, 1)
        assert [i.insert_text for i in found] == ["fetch_user(uid)"]
    prompt = fim_requests(fake_llm)[0].body["prompt"]
    assert "Rename load_user to fetch_user everywhere" in prompt
    assert "Write the changelog entry" not in prompt  # finished: not the task any more
    assert "models.py (pending review)" in prompt
    assert "def fetch_user(uid):" in prompt
    assert prompt.endswith("user = ")


async def test_a_chat_model_completes_through_the_agents_provider(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    fake_llm.set_script({"side_turn": {"text": "```python\na + b\n```"}})
    write_user_config({"completion": {"enabled": True, "debounce_ms": 0}})  # the session model
    source = workspace / "calc.py"
    text = "def add(a, b):\n    return \n"
    source.write_text(text)
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(source, text)
        found = await answer(client, source, 1, 11, 1)
        assert [item.insert_text for item in found] == ["a + b"]  # the fence dropped
    [request] = [r for r in fake_llm.requests if r.turn == "side"]
    assert request.path.endswith("/v1/messages")  # anthropic/claude-test, asked as a chat
    assert "Reply with only the text to insert at <CURSOR>" in str(request.body["system"])
    [block] = request.body["messages"][0]["content"]
    assert block["text"] == "File calc.py:\ndef add(a, b):\n    return <CURSOR>\n"
    assert "cache_control" not in block  # a one-off text: no cache written at 1.25× the price
    assert fim_requests(fake_llm) == []
