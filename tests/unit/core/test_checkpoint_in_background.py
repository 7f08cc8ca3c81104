"""A step's checkpoint is recorded while the next model request is in flight (issue 24: off
the critical path), yet always before the next step's tools run and before the turn ends."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsp_agent.core.options import AgentOptions
from lsp_agent.core.session.service import SessionService
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.provider import ScriptedProvider
from tests.unit.core.test_declared_tools import DONE, MODEL, CountingSnapshots, NewTools, calls


class SlowAfterSnapshots(CountingSnapshots):
    """The tree after the first step is taken only once the next model request has been
    sent (or after 5 s, when nothing sends it meanwhile: the recording was in its way)."""

    def __init__(self, provider: ScriptedProvider) -> None:
        super().__init__()
        self._provider = provider
        self.overlapped: bool | None = None

    async def track(self, workspace: Any, overlay: Mapping[str, str] | None = None) -> str:
        if self.tracked == 1:  # the tree after the first step
            for _ in range(500):
                if len(self._provider.requests) >= 2:
                    break
                await asyncio.sleep(0.01)
            self.overlapped = len(self._provider.requests) >= 2
        return await super().track(workspace, overlay)


async def test_the_next_request_is_sent_while_the_checkpoint_is_recorded(
    store: SqliteEventStore, tmp_path: Path
) -> None:
    provider = ScriptedProvider([calls("scribble"), calls("scribble"), DONE])
    snapshots = SlowAfterSnapshots(provider)
    editor = RecordingEditor()
    service = SessionService(
        store=store,
        provider=provider,
        tools=NewTools(),
        editor=editor,
        clock=FakeClock(),
        ids=SequentialIds(),
        options=AgentOptions(model=MODEL, titles=False),
        snapshots=snapshots,
    )
    sid = await service.create(workspace_folder=str(tmp_path))
    await service.admit(sid, [{"type": "text", "text": "go"}])

    outcome = await service.run_turn(sid)

    assert outcome.stop_reason == "end_turn"
    assert snapshots.overlapped is True
    events = await store.events(sid)
    checkpoints = [e for e in events if e.type == "checkpoint_recorded"]
    assert [(c.data["before"], c.data["after"]) for c in checkpoints] == [
        ("tree1", "tree2"),
        ("tree2", "tree3"),
    ]
    # the first step's checkpoint lands before the second step's tool runs…
    running = [
        e.seq
        for e in events
        if e.type == "tool_call_updated" and e.data.get("status") == "in_progress"
    ]
    assert checkpoints[0].seq < running[1]
    # …and every checkpoint before the turn's end
    [idle] = [e for e in events if e.type == "state_changed" and e.data["state"] == "idle"]
    assert checkpoints[-1].seq < idle.seq
