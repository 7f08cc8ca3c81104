"""Malformed ACP input, written as raw lines to a real ``lsp-agent acp``: a line that is not
JSON, params that do not validate, an unknown method, a prompt to an unknown session — each
gets its JSON-RPC error and the process goes on serving. And stdin closing while a request
is still being served: it is answered, then the process exits cleanly."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs

from tests.support.acp_client import LINE_LIMIT, TIMEOUT, agent_command

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}


@attrs.define
class Raw:
    process: asyncio.subprocess.Process
    stderr: Path

    async def send(self, line: str | dict[str, Any]) -> None:
        text = line if isinstance(line, str) else json.dumps(line)
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, request_id: Any, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def receive(self) -> dict[str, Any]:
        """The next message that is not a notification."""
        assert self.process.stdout is not None
        while True:
            async with asyncio.timeout(TIMEOUT):
                line = await self.process.stdout.readline()
            assert line, f"the agent closed stdout: {self.log()}"
            message = json.loads(line)
            assert isinstance(message, dict)
            if "method" not in message:
                return message

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")


@asynccontextmanager
async def raw_agent(env: dict[str, str], cwd: Path, stderr: Path) -> AsyncIterator[Raw]:
    with stderr.open("ab") as log:
        command, *args = agent_command()
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log.fileno(),
            limit=LINE_LIMIT,
        )
        try:
            yield Raw(process, stderr)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


def error_of(message: dict[str, Any], request_id: Any) -> dict[str, Any]:
    assert message.get("id") == request_id, message
    assert "error" in message, message
    assert message["jsonrpc"] == "2.0"
    error: dict[str, Any] = message["error"]
    return error


async def test_every_malformed_input_is_answered_and_the_agent_goes_on(
    ws: Path, tmp_path: Path, acp_env: dict[str, str]
) -> None:
    async with raw_agent(acp_env, ws, tmp_path / "acp.log") as agent:
        await agent.send('{"jsonrpc": "2.0", "id": 1, "method": "initialize", ')
        assert error_of(await agent.receive(), None)["code"] == -32700

        await agent.send("[1, 2, 3]")
        assert error_of(await agent.receive(), None)["code"] == -32600

        await agent.request(2, "initialize", {"clientCapabilities": {}})
        error = error_of(await agent.receive(), 2)
        assert error["code"] == -32602
        assert "protocolVersion" in error["message"]

        await agent.request(3, "no/such_method", {})
        assert error_of(await agent.receive(), 3)["code"] == -32601

        await agent.request(4, "initialize", INITIALIZE)
        answer = await agent.receive()
        assert answer["id"] == 4
        assert answer["result"]["protocolVersion"] == 1
        # honest: images reach the model, audio does not (docs/acp.md, "Prompts")
        prompts = answer["result"]["agentCapabilities"]["promptCapabilities"]
        assert prompts == {"image": True, "audio": False, "embeddedContext": True}

        await agent.request(40, "authenticate", {"methodId": "anthropic"})
        assert (await agent.receive()) == {"jsonrpc": "2.0", "id": 40, "result": {}}
        await agent.request(41, "authenticate", {"methodId": "openai"})
        error = error_of(await agent.receive(), 41)
        assert error["code"] == -32000
        assert "OPENAI_API_KEY" in error["message"]
        await agent.request(42, "authenticate", {"methodId": "no-such-provider"})
        assert error_of(await agent.receive(), 42)["code"] == -32602

        for cwd in (5, "relative/path"):
            await agent.request(5, "session/new", {"cwd": cwd, "mcpServers": []})
            error = error_of(await agent.receive(), 5)
            assert error["code"] == -32602
            assert "cwd" in error["message"]

        prompt = {"sessionId": "ses_no_such_session", "prompt": [{"type": "text", "text": "hi"}]}
        await agent.request(6, "session/prompt", prompt)
        error = error_of(await agent.receive(), 6)
        assert error["code"] == -32002
        assert "ses_no_such_session" in error["message"]

        await agent.request(7, "session/prompt", {"sessionId": "ses_x", "prompt": "hi"})
        assert error_of(await agent.receive(), 7)["code"] == -32602

        await agent.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"nope": 1}})
        await agent.send({"jsonrpc": "2.0", "method": "no/such_notification"})

        # still serving
        await agent.request(8, "session/list", {"cwd": str(ws)})
        answer = await agent.receive()
        assert answer["id"] == 8
        assert answer["result"]["sessions"] == []
        assert agent.process.returncode is None

        assert agent.process.stdin is not None
        agent.process.stdin.close()
        async with asyncio.timeout(TIMEOUT):
            assert await agent.process.wait() == 0, agent.log()
        assert "Traceback" not in agent.log()


async def test_stdin_closing_while_a_request_is_served_answers_it_then_exits_cleanly(
    ws: Path, tmp_path: Path, acp_env: dict[str, str]
) -> None:
    async with raw_agent(acp_env, ws, tmp_path / "acp.log") as agent:
        await agent.request(1, "initialize", INITIALIZE)
        assert (await agent.receive())["id"] == 1
        # session/new loads the agent for the folder (a while) and then writes to the store
        await agent.request(2, "session/new", {"cwd": str(ws), "mcpServers": []})
        assert agent.process.stdin is not None
        agent.process.stdin.close()
        answer = await agent.receive()
        assert answer["id"] == 2
        assert answer["result"]["sessionId"].startswith("ses_"), answer
        async with asyncio.timeout(TIMEOUT):
            assert await agent.process.wait() == 0, agent.log()
        log = agent.log()
        assert "event store is closed" not in log, log
        assert "Traceback" not in log, log
    assert os.listdir(ws) == []
