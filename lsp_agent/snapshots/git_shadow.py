"""GitShadowSnapshots: the snapshot store, one shadow git repository per workspace folder.

Every operation on a workspace holds that workspace's :class:`asyncio.Lock` and runs its git
work in a thread (:func:`asyncio.to_thread`). Once started, an operation runs to the end even
if its caller is cancelled (git leaves nothing half-done, and the lock is released only
afterwards); the caller still sees the cancellation.

See :mod:`lsp_agent.snapshots.shadow_repo` for how a shadow repository works, and
``docs/snapshots.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs

from lsp_agent.snapshots import layout
from lsp_agent.snapshots.shadow_repo import (
    LARGE_FILE_LIMIT,
    FileChange,
    GitRunner,
    ShadowRepo,
    SnapshotError,
    collect_garbage,
    open_shadow,
)
from lsp_agent.system.atomic import write_atomic
from lsp_agent.system.git_process import DEFAULT_TIMEOUT

__all__ = ["PRUNE_INTERVAL", "GitShadowSnapshots", "PruneReport"]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

PRUNE_INTERVAL = 24 * 60 * 60.0
"""Seconds between two prunes: a day."""

_DAY = 24 * 60 * 60.0
_LEFTOVER_AGE = _DAY
"""A half-made shadow dir (``.new-*``, from a crash) older than this is removed by prune."""


@attrs.frozen(kw_only=True)
class PruneReport:
    """What :meth:`GitShadowSnapshots.prune` did."""

    ran: bool
    """False when the last prune was less than a day ago (then nothing was done)."""
    collected: int = 0
    """Shadow repositories garbage-collected."""
    removed: int = 0
    """Shadow repositories deleted (their folder untouched for longer than the age limit)."""
    failed: int = 0
    """Shadow repositories that could not be pruned (logged)."""


class GitShadowSnapshots:
    """Snapshots of workspace folders in hidden git repositories under ``<data_dir>/snapshots``.

    Trees are git tree ids (hex strings). Paths are relative to the workspace folder and
    ``/``-separated. Errors are :class:`SnapshotError`. Use one instance per data dir.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        git_executable: str | None = None,
        clock: Callable[[], float] = time.time,
        large_file_limit: int = LARGE_FILE_LIMIT,
        environ: Mapping[str, str] | None = None,
        git_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self._data_dir = data_dir
        self._runner = GitRunner(git_executable, timeout=git_timeout)
        self._clock = clock
        self._large_file_limit = large_file_limit
        self._environ = dict(os.environ if environ is None else environ)
        self._locks = layout.WorkspaceLocks()
        self._repos: dict[str, ShadowRepo] = {}
        self._running: set[asyncio.Task[Any]] = set()

    async def track(self, workspace: Path, overlay: Mapping[str, str] | None = None) -> str:
        """Record the workspace's files as they are now; answer the tree id.

        Unchanged files are not read again (git compares their stat data), ignored files,
        nested repositories and untracked files over 2 MB are left out.

        ``overlay``: absolute (resolved) path → the text an editor's buffer holds (unsaved
        changes included). A file the snapshot records gets that text (UTF-8, bytes that
        were not UTF-8 kept with ``surrogateescape``) instead of its bytes on disk; the
        overlay never adds a file, and paths outside the workspace are ignored.
        """
        chosen = dict(overlay) if overlay else None
        return await self._with_repo(workspace, lambda repo: repo.track(chosen))

    async def read(self, workspace: Path, tree: str, path: str) -> str | None:
        """The text of the file ``path`` in ``tree`` (``surrogateescape`` for bytes that are
        not UTF-8); None when ``tree`` has no such file (or not a regular file there)."""
        data = await self._with_repo(workspace, lambda repo: repo.read(tree, path))
        return None if data is None else data.decode("utf-8", errors="surrogateescape")

    async def diff(self, workspace: Path, from_tree: str, to_tree: str) -> list[FileChange]:
        """The files that differ from ``from_tree`` to ``to_tree``, with line counts."""
        return await self._with_repo(workspace, lambda repo: repo.diff(from_tree, to_tree))

    async def patch(self, workspace: Path, from_tree: str, to_tree: str) -> str:
        """A unified diff from ``from_tree`` to ``to_tree`` ("" when they are the same)."""
        return await self._with_repo(workspace, lambda repo: repo.patch(from_tree, to_tree))

    async def restore(
        self, workspace: Path, tree: str, paths: Sequence[str] | None = None
    ) -> list[str]:
        """Make ``paths`` (files or folders; default: everything) match ``tree`` exactly.

        Changed files are rewritten, files created since are deleted, deleted files come back.
        Ignored files and untracked large files are never touched. Answers the paths changed.
        """
        chosen = None if paths is None else list(paths)
        return await self._with_repo(workspace, lambda repo: repo.restore(tree, chosen))

    async def changed_since(
        self,
        workspace: Path,
        tree: str,
        paths: Sequence[str],
        overlay: Mapping[str, str] | None = None,
    ) -> list[str]:
        """Which of ``paths`` differ now from what ``tree`` has for them (a user's edit); a
        file in ``overlay`` is compared by the buffer's text (see :meth:`track`)."""
        chosen = list(paths)
        buffers = dict(overlay) if overlay else None
        return await self._with_repo(
            workspace, lambda repo: repo.changed_since(tree, chosen, buffers)
        )

    async def prune(self, max_age_days: float = 7.0) -> PruneReport:
        """Drop snapshots older than ``max_age_days``; does nothing if it ran less than a day ago.

        Each shadow repository is garbage-collected (objects only older snapshots needed are
        deleted); one whose folder has not been snapshotted for longer is deleted whole.
        """
        root = layout.snapshots_root(self._data_dir)
        now = self._clock()
        if not await asyncio.to_thread(_claim_prune, root, now):
            return PruneReport(ran=False)
        shadows = await asyncio.to_thread(_shadow_dirs, root, now)
        max_age = max_age_days * _DAY
        counts = {"collected": 0, "removed": 0, "failed": 0}
        for git_dir in shadows:
            key = git_dir.name

            def work(git_dir: Path = git_dir, key: str = key) -> str:
                return self._prune_one(git_dir, key, now, max_age, max_age_days)

            outcome = await self._locked(key, work)
            counts[outcome] += 1
        return PruneReport(ran=True, **counts)

    # -- internals ------------------------------------------------------------------------------

    async def _with_repo(self, workspace: Path, action: Callable[[ShadowRepo], _T]) -> _T:
        try:
            resolved = workspace.resolve(strict=True)
        except OSError as exc:
            raise SnapshotError(f"workspace folder not found: {workspace}") from exc
        key = layout.workspace_key(resolved)

        def work() -> _T:
            repo = self._repos.get(key)
            if repo is None:
                repo = self._repos[key] = open_shadow(
                    data_dir=self._data_dir,
                    workspace=resolved,
                    runner=self._runner,
                    base_env=self._environ,
                    clock=self._clock,
                    large_file_limit=self._large_file_limit,
                )
            return action(repo)

        return await self._locked(key, work)

    async def _locked(self, key: str, work: Callable[[], _T]) -> _T:
        """``work()`` in a thread under ``key``'s lock, finished even if the caller is cancelled."""

        async def run() -> _T:
            async with self._locks.get(key):
                return await asyncio.to_thread(work)

        task = asyncio.create_task(run())
        self._running.add(task)
        task.add_done_callback(self._finished)
        return await asyncio.shield(task)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved here too: its caller may have been cancelled

    def _prune_one(
        self, git_dir: Path, key: str, now: float, max_age: float, max_age_days: float
    ) -> str:
        try:
            if now - _last_used(git_dir) > max_age:
                self._repos.pop(key, None)
                shutil.rmtree(git_dir)
                return "removed"
            collect_garbage(
                self._runner,
                git_dir,
                base_env=self._environ,
                cutoff=now - max_age,
                max_age_days=max_age_days,
            )
        except (OSError, SnapshotError) as exc:
            _log.warning("could not prune snapshots in %s: %s", git_dir, exc)
            return "failed"
        return "collected"


def _claim_prune(root: Path, now: float) -> bool:
    """Whether a prune is due (none in the last day); if so, note that one runs now."""
    stamp = root / layout.PRUNE_STAMP
    try:
        last = float(stamp.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        last = None
    if last is not None and 0 <= now - last < PRUNE_INTERVAL:
        return False
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomic(stamp, f"{now}\n".encode("ascii"))
    except OSError as exc:
        _log.warning("could not write %s: %s", stamp, exc)
    return True


def _shadow_dirs(root: Path, now: float) -> list[Path]:
    """The shadow dirs under ``root``; half-made ones left by a crash are removed."""
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.is_symlink() or not entry.is_dir():
            continue
        if entry.name.startswith(".new-"):
            with contextlib.suppress(OSError):
                if now - entry.stat().st_mtime > _LEFTOVER_AGE:
                    shutil.rmtree(entry)
            continue
        if not entry.name.startswith(".") and (entry / "HEAD").is_file():
            found.append(entry)
    return found


def _last_used(git_dir: Path) -> float:
    """When a tree was last recorded in ``git_dir`` (its trees log), else when it was made."""
    for candidate in (git_dir / layout.TREES_LOG, git_dir / layout.WORKSPACE_FILE, git_dir):
        with contextlib.suppress(OSError):
            return candidate.stat().st_mtime
    return 0.0
