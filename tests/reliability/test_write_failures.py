"""A write that fails where no one waits for it (the recorder's batching timer) still stops
the turn: the next caller gets the error. Runs everywhere (the full-disk test needs root)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from lsp_agent.core.clock import SystemClock
from lsp_agent.core.errors import LspAgentError
from lsp_agent.core.events import NewEvent, StateChanged
from lsp_agent.core.recorder import Recorder


class FlakyStore:
    """Appends succeed until ``failing`` is set."""

    def __init__(self) -> None:
        self.failing = False
        self.appended: list[NewEvent] = []

    async def append(self, session_id: str, events: Sequence[NewEvent]) -> list[Any]:
        if self.failing:
            raise LspAgentError("the disk is full")
        self.appended.extend(events)
        return [object() for _ in events]


class QuietEditor:
    async def publish(self, event: Any) -> None:
        return None


async def test_a_failed_timed_flush_is_raised_to_the_next_caller() -> None:
    store = FlakyStore()
    recorder = Recorder(
        session_id="ses_1",
        store=store,  # type: ignore[arg-type]
        editor=QuietEditor(),  # type: ignore[arg-type]
        clock=SystemClock(),
        batch_window=0.05,
    )
    await recorder.delta("text_delta", "msg_1", "prt_1", "a")  # leading edge: committed now
    await recorder.delta("text_delta", "msg_1", "prt_1", "b")  # batched: the timer commits it
    store.failing = True
    await asyncio.sleep(0.3)  # the timer's flush has failed by now
    store.failing = False
    with pytest.raises(LspAgentError, match="disk is full"):
        await recorder.emit(StateChanged(state="idle"))
    # Raised once: the store works again, so recording goes on.
    await recorder.emit(StateChanged(state="idle"))
    assert [e.type for e in store.appended] == ["text_delta", "state_changed"]
    await recorder.close()
