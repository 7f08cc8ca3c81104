"""Adding a front door = one module that maps its protocol onto the runtime (docs/architecture.md
"Front doors"). ``tests/support/tiny_door.py`` is such a door, written the way ``lsp/``,
``acp/`` and ``cli.py`` are: it knows the runtime and its own message shapes, never the store.
Run as a process against the fake LLM, it creates, prompts, streams, de-duplicates a retried
prompt, cancels a running turn, lists and deletes."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.provider_env import agent_env

ROOT = Path(__file__).resolve().parents[2]
WAIT = 90.0


class _Door:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self._process = process

    def __call__(self, do: str, **params: Any) -> Any:
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(json.dumps({"do": do, **params}) + "\n")
        self._process.stdin.flush()
        ready, _, _ = select.select([self._process.stdout], [], [], WAIT)
        assert ready, f"the door did not answer {do!r}"
        answer: dict[str, Any] = json.loads(self._process.stdout.readline())
        if "error" in answer:
            return answer
        return answer["ok"]


@pytest.fixture
def door(workspace: Path, fake_llm: FakeLLMServer) -> Iterator[_Door]:
    env = agent_env(fake_llm, "sk-door-test", PYTHONPATH=str(ROOT))
    with subprocess.Popen(
        [sys.executable, "-m", "tests.support.tiny_door", str(workspace)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            yield _Door(process)
        finally:
            assert process.stdin is not None
            process.stdin.close()
            assert process.wait(timeout=WAIT) == 0


def test_a_door_drives_a_session_through_the_runtime_alone(
    door: _Door, fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_script({"turns": [{"text": "Hello from the fake."}]})
    session = door("new")

    first = door("prompt", session=session, text="hi", id="c1")
    assert first["queued"] is False
    assert door("idle", session=session)
    again = door("prompt", session=session, text="hi", id="c1")  # a retry: no new input
    assert again == first
    assert door("idle", session=session)

    updates = door("updates", session=session)
    kinds = [u["kind"] for u in updates]
    assert kinds.count("user_message_admitted") == 1
    assert "text_delta" in kinds
    assert [u["status"] for u in updates if "status" in u] == ["completed"]
    assert [u["seq"] for u in updates] == list(range(1, len(updates) + 1))
    assert len(fake_llm.model_bodies()) == 1

    assert door("list") == [session]
    assert door("delete", session=session) == "deleted"
    assert door("list") == []


def test_a_door_cancels_a_running_turn_and_other_work_waits_for_it(
    door: _Door, fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_script({"turns": [{"text": "slow", "hold_after": 0}]})  # until release()
    session = door("new")
    door("prompt", session=session, text="take your time", id="c1")
    deadline = time.monotonic() + WAIT
    while not fake_llm.model_bodies() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(fake_llm.model_bodies()) == 1  # the model is answering
    assert door("running", session=session) is True
    assert door("delete", session=session) == {"error": "SessionBusy"}

    door("cancel", session=session)
    assert door("running", session=session) is False
    fake_llm.release()
    ended = [u["status"] for u in door("updates", session=session) if "status" in u]
    assert ended == ["interrupted"]
    assert door("delete", session=session) == "deleted"


def test_one_prompt_sent_twice_at_once_is_admitted_once(
    door: _Door, fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_script({"turns": [{"text": "Once."}]})
    session = door("new")
    first, second = door("prompt_twice", session=session, text="hi", id="c7")
    assert first == second
    assert door("idle", session=session)
    kinds = [u["kind"] for u in door("updates", session=session)]
    assert kinds.count("user_message_admitted") == 1
    assert len(fake_llm.model_bodies()) == 1
