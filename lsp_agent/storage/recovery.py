"""Recovery at open: close the turns whose owner process died, and kill what they left running.

Every process that opens the database (``run``, ``sessions …``, ``doctor``, ``serve``) calls
:func:`recover` first, through ``app.open_data_store``. A session whose state is not ``idle``
has a turn in progress; the turn's first ``state_changed`` {state: running} names its owner
(pid and start time, ``system.owner``). While that owner lives, nothing of the session is
touched — whichever process it is, this one included. Once it is gone, the turn is closed the
way a cancel would have closed it, with one append:

- each unanswered permission ask → ``permission_resolved`` ``cancelled``, each unanswered
  question → ``question_resolved`` ``cancelled``;
- each command process group recorded by ``process_started`` without ``process_ended`` is
  killed (``SIGTERM``, ``SIGKILL`` after a short grace), then gets its ``process_ended``.
  Only processes that are in that process group *and* started no earlier than its recorded
  leader are signalled; a group whose leader is alive with another start time is a reused
  id and is left alone;
- each tool call ``in_progress`` → ``interrupted`` (it is never run again), each call still
  ``pending`` (it never ran) → ``cancelled``;
- a still-streaming assistant message → ``interrupted`` (its partial text is kept);
- then ``state_changed`` {state: idle, stopReason: error, error: {message, retryable: true}}.

The append is conditional (``append_after``): if another process appended to the session
since it was read (it recovered the session first, or resumed it), nothing is written and
the session is looked at again. Input that was admitted but never promoted stays in the inbox:
the next turn of the session (``run --session ID``, an editor) promotes it.

Recovery also removes the temporary files of atomic writes that dead processes left in the
workspace (``workspace.temp_files``: each process records the folders it writes them in, and
each name carries its writer's pid and start time), and makes this process record its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Iterable
from typing import Any, Final

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.clock import SystemClock, iso_time
from lsp_agent.core.events import NewEvent
from lsp_agent.core.interfaces import Clock
from lsp_agent.storage.event_log import OpenProcess, OpenTurn, SqliteEventStore
from lsp_agent.system import procfs
from lsp_agent.system.owner import owner_alive
from lsp_agent.workspace.temp_files import TempJournal, use_journal

__all__ = [
    "KILL_GRACE_SECONDS",
    "NOT_RUN_ERROR",
    "TOOL_ERROR",
    "TURN_ERROR",
    "RecoveredTurn",
    "RecoveryReport",
    "group_members",
    "kill_orphans",
    "recover",
]

TURN_ERROR: Final = "interrupted: the process running this turn died"
TOOL_ERROR: Final = "interrupted: the process running this turn died (not re-executed)"
NOT_RUN_ERROR: Final = "cancelled: the process running this turn died before it ran"
KILL_GRACE_SECONDS: Final = 2.0
_POLL_SECONDS: Final = 0.05
_KILL_WAIT_SECONDS: Final = 2.0
_ATTEMPTS: Final = 5
TEMP_JOURNAL_DIR: Final = "temp-files"

_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class RecoveredTurn:
    session_id: str
    tool_calls: int
    """Tool calls marked interrupted or cancelled."""
    messages: int
    """Assistant messages marked interrupted."""
    asks: int
    """Permission asks and questions resolved as cancelled."""
    process_groups: int
    """Recorded process groups closed."""
    killed: tuple[int, ...]
    """The pids that were signalled."""


@attrs.frozen(kw_only=True)
class RecoveryReport:
    recovered: tuple[RecoveredTurn, ...] = ()
    failed: tuple[str, ...] = ()
    """Sessions that could not be recovered (the reason is logged); tried again next open."""
    temp_files: tuple[str, ...] = ()
    """Temporary files of dead writers that were removed."""


async def recover(
    store: SqliteEventStore,
    *,
    clock: Clock | None = None,
    alive: Callable[[dict[str, Any]], bool] = owner_alive,
    grace: float = KILL_GRACE_SECONDS,
) -> RecoveryReport:
    """Close every turn whose recorded owner process is gone (see the module docstring)."""
    clock = clock or SystemClock()
    temp_files = await _sweep_temp_files(store, alive)
    recovered: list[RecoveredTurn] = []
    failed: list[str] = []
    for turn in await store.open_turns():
        if _owner_alive(turn, alive):
            continue
        try:
            done = await _recover_session(store, turn, clock=clock, alive=alive, grace=grace)
        except Exception:
            _log.warning("could not recover session %s", turn.session_id, exc_info=True)
            failed.append(turn.session_id)
            continue
        if done is not None:
            recovered.append(done)
    return RecoveryReport(
        recovered=tuple(recovered), failed=tuple(failed), temp_files=tuple(temp_files)
    )


async def _sweep_temp_files(
    store: SqliteEventStore, alive: Callable[[dict[str, Any]], bool]
) -> list[str]:
    """Remove dead writers' temporary files; from now on, record this process's own."""
    journal = TempJournal(store.path.parent / TEMP_JOURNAL_DIR)
    use_journal(journal)
    try:
        removed = await asyncio.to_thread(journal.sweep, alive)
    except Exception:  # housekeeping never blocks start-up
        _log.warning("could not remove the temporary files of dead writers", exc_info=True)
        return []
    if removed:
        _log.info("removed %d temporary files left by dead writers: %s", len(removed), removed)
    return removed


def _owner_alive(turn: OpenTurn, alive: Callable[[dict[str, Any]], bool]) -> bool:
    # A turn with no recorded owner was left by a version that did not record one: nobody
    # can still be running it.
    return turn.owner is not None and alive(turn.owner)


async def _recover_session(
    store: SqliteEventStore,
    turn: OpenTurn,
    *,
    clock: Clock,
    alive: Callable[[dict[str, Any]], bool],
    grace: float,
) -> RecoveredTurn | None:
    killed: set[int] = set()
    current: OpenTurn | None = turn
    for _ in range(_ATTEMPTS):
        if current is None or _owner_alive(current, alive):
            return None  # recovered by someone else, or resumed by a live process
        for process in current.processes:
            killed.update(await kill_orphans(process, grace=grace))
        events = _closing_events(current, iso_time(clock.now()))
        if await store.append_after(current.session_id, current.last_seq, events) is not None:
            result = RecoveredTurn(
                session_id=current.session_id,
                tool_calls=len(current.tool_calls),
                messages=len(current.streaming_messages),
                asks=len(current.permission_asks) + len(current.question_asks),
                process_groups=len(current.processes),
                killed=tuple(sorted(killed)),
            )
            _log.info("recovered the interrupted turn of session %s: %s", turn.session_id, result)
            return result
        # Another writer got there first: look again.
        again = await store.open_turns([turn.session_id])
        current = again[0] if again else None
    raise RuntimeError(f"session {turn.session_id} kept changing while it was being recovered")


def _closing_events(turn: OpenTurn, now: str) -> list[NewEvent]:
    """What a cancel would have written, for a turn whose owner died."""
    items: list[ev.Event] = []
    for ask in turn.permission_asks:
        items.append(
            ev.PermissionResolved(
                tool_call_id=ask.tool_call_id,
                message_id=ask.message_id,
                permission=ask.permission,
                state="cancelled",
            )
        )
    for call_id in turn.question_asks:
        items.append(ev.QuestionResolved(tool_call_id=call_id, state="cancelled"))
    for process in turn.processes:
        items.append(ev.ProcessEnded(tool_call_id=process.tool_call_id, pgid=process.pgid))
    for call in turn.tool_calls:
        ran = call.status == "in_progress"
        items.append(
            ev.ToolCallUpdated(
                tool_call_id=call.tool_call_id,
                message_id=call.message_id,
                tool_name=call.tool_name,
                status="interrupted" if ran else "cancelled",
                error=TOOL_ERROR if ran else NOT_RUN_ERROR,
            )
        )
    for message_id in turn.streaming_messages:
        items.append(
            ev.AssistantMessageEnded(message_id=message_id, status="interrupted", error=TURN_ERROR)
        )
    items.append(
        ev.StateChanged(
            state="idle",
            stop_reason="error",
            error={"message": TURN_ERROR, "retryable": True},
        )
    )
    return [NewEvent.of(event, now) for event in items]


# -- orphaned process groups -----------------------------------------------------------------


async def kill_orphans(process: OpenProcess, *, grace: float = KILL_GRACE_SECONDS) -> list[int]:
    """End what is left of a recorded process group; the pids signalled.

    Only processes whose process group is ``process.pgid`` and that started no earlier than
    the recorded leader (``start_ticks``, from ``/proc``) are ours: ``SIGTERM`` (and
    ``SIGCONT``, so stopped ones handle it), then ``SIGKILL`` to those still there after
    ``grace`` seconds. Nothing is signalled without ``/proc`` or a recorded start time.
    """
    if process.pgid <= 1 or process.start_ticks <= 0 or not procfs.mounted():
        return []
    members = group_members(process.pgid, process.start_ticks)
    signalled: set[int] = set()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while members:
        fresh = members.keys() - signalled
        _signal(members, fresh, signal.SIGTERM)
        _signal(members, fresh, signal.SIGCONT)
        signalled.update(fresh)
        if loop.time() >= deadline:
            break
        await asyncio.sleep(_POLL_SECONDS)
        members = group_members(process.pgid, process.start_ticks)
    deadline = loop.time() + _KILL_WAIT_SECONDS
    while members:  # after the grace: SIGKILL until none is left (a forking group included)
        _signal(members, members.keys(), signal.SIGKILL)
        signalled.update(members)
        if loop.time() >= deadline:
            _log.warning(
                "processes %s of group %d did not die on SIGKILL", sorted(members), process.pgid
            )
            break
        await asyncio.sleep(_POLL_SECONDS)
        members = group_members(process.pgid, process.start_ticks)
    return sorted(signalled)


def group_members(pgid: int, since_ticks: int) -> dict[int, int]:
    """Live processes (pid → start ticks) in process group ``pgid`` that started at or after
    ``since_ticks``; none when the group's id was reused (its leader, ``pid == pgid``, lives
    with a different start time)."""
    found: dict[int, int] = {}
    for pid in procfs.pids():
        stat = procfs.read_stat(pid)
        if stat is None or stat.pgid != pgid:
            continue
        if pid == pgid and stat.start_ticks != since_ticks:
            return {}  # a new group under a reused id: not ours
        if stat.state not in ("Z", "X") and stat.start_ticks >= since_ticks:
            found[pid] = stat.start_ticks
    return found


def _signal(members: dict[int, int], pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        stat = procfs.read_stat(pid)
        if stat is None or stat.start_ticks != members[pid]:
            continue  # gone (or the pid now names another process)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)
