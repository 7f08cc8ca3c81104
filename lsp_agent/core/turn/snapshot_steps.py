"""A turn's undo points: the workspace tree is taken while the first request is in flight,
and after each step whose tools may have changed files what changed is recorded as a
checkpoint (``checkpoint_recorded``, see ``checkpoints``). That recording is off the
critical path: it starts when the step's tools end and runs while the next request is in
flight; the next step's tools, and the turn's end, wait for it (:meth:`SnapshotSteps.settle`).

Documents open in the editor are recorded as their buffers hold them (an edit made through the
editor is in the buffer, not on disk yet). A snapshot problem never stops the agent's work; it
only loses that undo point.

Each checkpoint's changed files are also cut into hunks the user can keep or undo one by one
(``review_recorded``, see ``core/review``), filed under the same user message; the event
carries the whole review list's counts so the editor's review view updates without a query.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from lsp_agent.core import events as ev
from lsp_agent.core.checkpoints import SnapshotChange, SnapshotStore, open_in
from lsp_agent.core.errors import LspAgentError
from lsp_agent.core.interfaces import Editor, EventStore, IdFactory
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.review.ledger import Ledger
from lsp_agent.core.review.record import step_hunks

_log = logging.getLogger(__name__)

MAX_PATCH_CHARS = 100_000


class SnapshotSteps:
    """Without a snapshot store (or a workspace folder) it records nothing."""

    def __init__(
        self,
        *,
        snapshots: SnapshotStore | None,
        editor: Editor,
        recorder: Recorder,
        ids: IdFactory,
        store: EventStore | None = None,
    ) -> None:
        """``store``: where the review list is folded from (without it no hunks are
        recorded)."""
        self._snapshots = snapshots
        self._store = store
        self._ledger: Ledger | None = None
        self._editor = editor
        self._rec = recorder
        self._ids = ids
        self._tree: str | None = None
        self._first: asyncio.Task[str | None] | None = None
        self._recording: asyncio.Task[None] | None = None
        self.turn_message: str | None = None
        """The user message the turn answers: its checkpoints are filed under it."""

    def start(self, roots: tuple[str, ...]) -> None:
        """Take the tree before the first step, in the background."""
        self._first = asyncio.create_task(self._track(roots))

    async def before_tools(self) -> None:
        """Tools are about to run: the tree before them must be taken by now, and the last
        step's checkpoint recorded."""
        if self._first is not None:
            self._tree, self._first = await self._first, None
        await self.settle()

    async def settle(self) -> None:
        """Wait for the last step's checkpoint to be recorded (a store failure raises). A
        cancelled wait leaves the recording running, for the next wait to finish."""
        recording = self._recording
        if recording is not None:
            await asyncio.shield(recording)
            self._recording = None

    def stop(self) -> None:
        if self._first is not None and not self._first.done():
            self._first.cancel()

    async def after_step(self, step_message_id: str, roots: tuple[str, ...]) -> None:
        """After a step whose tools may have changed files: the editor's buffers are read now,
        and what changed is recorded as a checkpoint in the background."""
        await self.settle()
        overlay = await self._overlay(roots)
        self._recording = asyncio.create_task(self._checkpoint(step_message_id, roots, overlay))

    async def _checkpoint(
        self, step_message_id: str, roots: tuple[str, ...], overlay: dict[str, str] | None
    ) -> None:
        before = self._tree
        after = await self._track(roots, overlay)
        self._tree = after
        if self._snapshots is None or before is None or after is None or before == after:
            return
        root = Path(roots[0])
        try:
            changed = await self._snapshots.diff(root, before, after)
            patch = await self._snapshots.patch(root, before, after)
        except (LspAgentError, OSError):
            _log.warning("could not diff the step's snapshots", exc_info=True)
            return
        checkpoint = ev.CheckpointRecorded(
            checkpoint_id=self._ids.new("chk"),
            message_id=self.turn_message or step_message_id,
            step_message_id=step_message_id,
            before=before,
            after=after,
            files=_changed_files(changed),
            patch=patch[:MAX_PATCH_CHARS],
        )
        stored = await self._rec.emit(checkpoint)
        await self._record_hunks(stored.session_id, root, checkpoint, changed)

    async def _record_hunks(
        self,
        session_id: str,
        root: Path,
        checkpoint: ev.CheckpointRecorded,
        changed: Sequence[SnapshotChange],
    ) -> None:
        """The step's hunks (``review_recorded``), with the review list's counts after them."""
        if self._snapshots is None or self._store is None:
            return
        try:
            hunks = await step_hunks(
                self._snapshots,
                root,
                checkpoint.before,
                checkpoint.after,
                changed,
                self._ids,
            )
        except (LspAgentError, OSError):
            _log.warning("could not read the step's files for review", exc_info=True)
            return
        if not hunks:
            return
        ledger = self._ledger or Ledger()
        ledger.apply_all(await self._store.events(session_id, after_seq=ledger.seen))
        self._ledger = ledger
        files = ledger.summary(str(root), adding=[h["path"] for h in hunks])
        await self._rec.emit(
            ev.ReviewRecorded(
                checkpoint_id=checkpoint.checkpoint_id,
                message_id=checkpoint.message_id,
                step_message_id=checkpoint.step_message_id,
                before=checkpoint.before,
                after=checkpoint.after,
                hunks=hunks,
                files=files,
            )
        )

    async def _overlay(self, roots: tuple[str, ...]) -> dict[str, str] | None:
        """The open documents inside the first workspace folder, as their buffers hold them
        (None when there is nothing to snapshot)."""
        if self._snapshots is None or not roots:
            return None
        return open_in(await self._editor.open_documents(), roots[0])

    async def _track(
        self, roots: tuple[str, ...], overlay: dict[str, str] | None = None
    ) -> str | None:
        """The first workspace folder's tree now, open documents as their buffers hold them
        (``overlay``, read now when not given); None without snapshots or when taking it
        failed."""
        if self._snapshots is None or not roots:
            return None
        try:
            if overlay is None:
                overlay = await self._overlay(roots)
            return await self._snapshots.track(Path(roots[0]), overlay)
        except (LspAgentError, OSError):
            _log.warning("snapshot failed; this step cannot be reverted", exc_info=True)
            return None


def _changed_files(changes: Sequence[SnapshotChange]) -> list[ev.ChangedFile]:
    return [
        {"path": c.path, "status": c.status, "additions": c.additions, "deletions": c.deletions}
        for c in changes
    ]
