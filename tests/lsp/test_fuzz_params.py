"""Property: no params object — random JSON, or the right keys with wrong values — gets
anything but a result or a JSON-RPC error from any custom method, and the server stays
healthy. One real server for all examples (started in a background event loop)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from lsp_agent.lsp.protocol import COMMAND_TYPES, METHODS
from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import AgentClient, agent_client

T = TypeVar("T")

INCOMING = sorted(n for n, m in METHODS.items() if m.direction == "client_to_server")
EXECUTE = "workspace/executeCommand"
REPLY_TIMEOUT = 20.0

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def _field_names(method: str) -> list[str]:
    model = COMMAND_TYPES[method].argument if method in COMMAND_TYPES else METHODS[method].params
    return [field.alias or name for name, field in model.model_fields.items()]


class Background:
    """A client whose event loop runs in a thread, so sync hypothesis tests can use it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture(scope="module")
def fuzz_target(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Background, AgentClient, str]]:
    """One server + client for the whole module, with a live session to aim at."""
    import os

    root = tmp_path_factory.mktemp("fuzz")
    workspace = root / "ws"
    workspace.mkdir()
    (root / "home" / ".config").mkdir(parents=True)
    background = Background()
    stack = contextlib.AsyncExitStack()

    async def start() -> tuple[AgentClient, str]:
        fake = await stack.enter_async_context(FakeLLMServer({"turns": []}))
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "home" / ".config"),
            "LSP_AGENT_DATA_DIR": str(root / "data"),
            "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
            "ANTHROPIC_API_KEY": "sk-fuzz",
            "LSP_AGENT_MODEL": "anthropic/claude-test",
            "LSP_AGENT_LOG": "CRITICAL",
        }
        client = await stack.enter_async_context(agent_client(env=env, folders=[workspace]))
        return client, await client.new_session()

    client, session = background.run(start())
    try:
        yield background, client, session
    finally:
        background.run(stack.aclose())
        background.close()


def _params(draw: st.DrawFn, method: str, session: str) -> Any:
    shape = draw(st.sampled_from(["random", "fields", "fields"]))
    if shape == "random":
        return draw(json_values)
    names = _field_names(method)
    chosen = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    params: dict[str, Any] = {}
    for name in chosen:
        if name == "sessionId":
            params[name] = draw(st.sampled_from([session, "ses_unknown", ""]) | json_scalars)
        else:
            params[name] = draw(json_values)
    if draw(st.booleans()):
        params[draw(st.text(max_size=8))] = draw(json_values)
    return params


@st.composite
def calls(draw: st.DrawFn, session: str) -> tuple[str, Any]:
    method = draw(st.sampled_from([*INCOMING, EXECUTE]))
    if method == EXECUTE:
        command = draw(st.sampled_from(sorted(COMMAND_TYPES)))
        arguments = draw(
            st.lists(st.builds(lambda: None) | st.just(0), max_size=0)
            | st.lists(st.just(_params(draw, command, session)), min_size=1, max_size=1)
            | st.lists(json_values, max_size=3)
        )
        return method, lsp.ExecuteCommandParams(command=command, arguments=arguments)
    return method, _params(draw, method, session)


def test_random_params_always_get_an_answer(
    fuzz_target: tuple[Background, AgentClient, str],
) -> None:
    background, client, session = fuzz_target
    answered = {"result": 0, "error": 0}

    @settings(
        max_examples=1500,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )
    @given(data=st.data())
    def one_call(data: st.DataObject) -> None:
        method, params = data.draw(calls(session))
        if method != EXECUTE and METHODS[method].kind == "notification":
            client.notify(method, params)
            return

        async def send() -> JsonRpcException | None:
            try:
                await asyncio.wait_for(
                    client.client.protocol.send_request_async(method, params), REPLY_TIMEOUT
                )
            except JsonRpcException as error:
                return error
            return None

        error = background.run(send(), timeout=REPLY_TIMEOUT + 5)
        if error is None:
            answered["result"] += 1
            return
        answered["error"] += 1
        # Only the client's mistakes: never an internal error.
        assert error.code in (-32602, -33001, -33002, -33004), (
            method,
            params,
            error.code,
            error.message,
        )

    one_call()
    assert answered["error"] > 100, answered
    assert answered["result"] > 0, answered

    async def healthy() -> None:
        listed = await client.request("agent/session/list", {})
        assert isinstance(listed["sessions"], list)
        fresh = await client.new_session()
        history = await client.request("agent/session/history", {"sessionId": fresh})
        assert history["events"][0]["type"] == "session_created"

    background.run(healthy())
