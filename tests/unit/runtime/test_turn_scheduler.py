"""The runtime's turn scheduler (``runtime/turns.py``): one turn at a time per session, for
background turns (the language server) and claimed ones (ACP, ``run``) alike."""

from __future__ import annotations

import asyncio

import pytest

from lsp_agent.core.errors import SessionBusy
from lsp_agent.runtime.turns import TurnScheduler


class _Turns:
    """Turns that end when told to; how many ran."""

    def __init__(self) -> None:
        self.ran = 0
        self.go = asyncio.Event()

    async def run(self, session_id: str) -> str:
        self.ran += 1
        await self.go.wait()
        return "end_turn"

    async def pending(self, session_id: str) -> bool:
        return False


async def test_a_turn_cancelled_before_it_starts_frees_its_session() -> None:
    turns = _Turns()
    scheduler = TurnScheduler(run_turn=turns.run, has_pending=turns.pending)
    assert scheduler.start("ses_1")
    await scheduler.cancel("ses_1")  # before the turn's task ran a step
    assert not scheduler.running("ses_1")
    turns.go.set()
    assert scheduler.start("ses_1")  # a new prompt runs, it is not queued behind nothing
    await asyncio.wait_for(_idle(scheduler, "ses_1"), 10)
    assert turns.ran == 1


async def test_a_claimed_turn_holds_its_session_until_it_ends() -> None:
    turns = _Turns()
    scheduler = TurnScheduler(run_turn=turns.run, has_pending=turns.pending)
    claimed = asyncio.ensure_future(turns.run("ses_1"))
    scheduler.claim("ses_1", claimed)
    with pytest.raises(SessionBusy):
        scheduler.claim("ses_1", asyncio.ensure_future(asyncio.sleep(0)))
    with pytest.raises(SessionBusy):
        async with scheduler.exclusive("ses_1", "being deleted"):
            pass
    assert scheduler.start("ses_2") is not False  # other sessions are free
    turns.go.set()
    assert await claimed == "end_turn"
    await asyncio.sleep(0)  # the done callback
    assert not scheduler.running("ses_1")
    await scheduler.aclose()


async def test_cancel_stops_a_claimed_turn() -> None:
    turns = _Turns()
    scheduler = TurnScheduler(run_turn=turns.run, has_pending=turns.pending)
    claimed = asyncio.ensure_future(turns.run("ses_1"))
    scheduler.claim("ses_1", claimed)
    await asyncio.sleep(0)
    await scheduler.cancel("ses_1")
    assert claimed.cancelled()
    assert not scheduler.running("ses_1")


async def _idle(scheduler: TurnScheduler, session_id: str) -> None:
    while scheduler.running(session_id):  # noqa: ASYNC110 -- the scheduler has no event to wait on
        await asyncio.sleep(0.01)


async def test_work_that_needs_the_session_waits_while_an_ended_turn_looks_for_queued_input() -> (
    None
):
    """A client that saw the turn end and deletes the session at once is not told "busy"
    because the turn's driver is still asking the log for queued input."""
    looking, answer = asyncio.Event(), asyncio.Event()

    async def ended(session_id: str) -> str:
        return "end_turn"

    async def pending(session_id: str) -> bool:
        looking.set()
        await answer.wait()
        return False

    scheduler = TurnScheduler(run_turn=ended, has_pending=pending)
    assert scheduler.start("ses_1")
    await asyncio.wait_for(looking.wait(), 10)
    held = asyncio.ensure_future(_hold(scheduler, "ses_1"))
    await asyncio.sleep(0)
    answer.set()
    assert await asyncio.wait_for(held, 10) == "held"


async def _hold(scheduler: TurnScheduler, session_id: str) -> str:
    async with scheduler.exclusive(session_id, "being deleted"):
        return "held"
