"""What completion never sends (docs/security.md "Completion"): a file that looks like it
holds secrets (by name, or any text near the cursor the secret filter would mask), a file git
ignores, a ``completion.exclude`` glob, a file outside every workspace folder. Such a request
gets an empty answer and no model request is made."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence

from lsp_agent.core.interfaces import Clock
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.search.globmatch import compile_glob
from lsp_agent.system.git_process import GitResult, run_git

SECRET_FILES = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    "credentials",
    "credentials.*",
    "secrets.*",
    ".git-credentials",
)
"""Names of files that hold secrets by their nature, whatever their text looks like."""

IGNORE_TTL = 30.0
"""Seconds a ``git check-ignore`` answer is fresh: the ``.gitignore`` rarely changes while a
file is being typed in. An older answer is still used while it is checked again in the
background (a git process on the typing path costs 5–10 ms)."""

Ignored = Callable[[str, str, Sequence[str]], bool]
"""(folder, path relative to it, every workspace folder) → does git ignore it (blocking)."""


def git_ignores(folder: str, relative: str, folders: Sequence[str]) -> bool:
    """``git check-ignore``: 0 ignored, 1 not; outside a repository (128) nothing is."""
    result = run_git(["check-ignore", "-q", "--", relative], cwd=folder, avoid=folders, timeout=5)
    return isinstance(result, GitResult) and result.returncode == 0


class Exclusions:
    def __init__(
        self,
        *,
        folders: Callable[[], Sequence[str]],
        globs: Sequence[str],
        secrets: SecretFilter,
        clock: Clock,
        ignored: Ignored = git_ignores,
    ) -> None:
        self._folders = folders
        self._globs = [compile_glob(glob) for glob in globs]
        self._secret_names = [compile_glob(name) for name in SECRET_FILES]
        self._secrets = secrets
        self._clock = clock
        self._ignored = ignored
        self._checked: dict[str, tuple[float, bool]] = {}
        self._rechecks: dict[str, asyncio.Task[bool]] = {}

    def place(self, path: str) -> tuple[str, str] | None:
        """The workspace folder holding ``path`` and the path relative to it."""
        for folder in self._folders():
            if path == folder or path.startswith(folder.rstrip(os.sep) + os.sep):
                return folder, os.path.relpath(path, folder).replace(os.sep, "/")
        return None

    async def reason(self, path: str, window: str) -> str | None:
        """Why ``path`` must not be sent (``window``: the text that would be), or None."""
        place = self.place(path)
        if place is None:
            return "outside the workspace folders"
        folder, relative = place
        if any(match(relative) for match in self._secret_names):
            return "a file that holds secrets"
        if any(match(relative) for match in self._globs):
            return "completion.exclude"
        if self.has_secret(window):
            return "a secret near the cursor"
        if await self._git_ignored(folder, relative):
            return "ignored by git"
        return None

    def has_secret(self, text: str) -> bool:
        return bool(self._secrets.mask(text).kinds)

    async def _git_ignored(self, folder: str, relative: str) -> bool:
        key = f"{folder}\0{relative}"
        known = self._checked.get(key)
        if known is None:
            return await self._check(key, folder, relative)
        if self._clock.monotonic() - known[0] >= IGNORE_TTL and key not in self._rechecks:
            task = asyncio.ensure_future(self._check(key, folder, relative))
            self._rechecks[key] = task
            task.add_done_callback(lambda done: self._recheck_done(key, done))
        return known[1]

    def _recheck_done(self, key: str, done: asyncio.Task[bool]) -> None:
        self._rechecks.pop(key, None)
        if not done.cancelled() and done.exception() is not None:
            self._checked.pop(key, None)  # checked again, in the way, next time

    async def _check(self, key: str, folder: str, relative: str) -> bool:
        now = self._clock.monotonic()
        folders = list(self._folders())
        ignored = await asyncio.to_thread(self._ignored, folder, relative, folders)
        self._checked[key] = (now, ignored)
        return ignored
