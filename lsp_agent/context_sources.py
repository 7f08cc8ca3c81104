"""Where the baseline note's facts come from: instruction files, skills, git, the platform.

Reads are cheap on purpose — they run before every model call to notice changes: files are
re-read only when their size or modification time changed, and git is asked only for a new
baseline (with ``GIT_OPTIONAL_LOCKS=0``, so reading status never rewrites the index).

Every instruction file goes through the wall of ``tools.context_read`` (docs/context.md
"What may be read"): it must really lie inside the folders it may come from, be a regular
file (a FIFO is never opened blocking), at most :data:`MAX_INSTRUCTIONS_BYTES` are shown,
and the secret filter runs over the text. A file the wall refuses becomes a short note in
its place — never its target's name or content — so the turn goes on and the model can say
why the instructions are missing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from lsp_agent.core.context import InstructionSource, SourcesSnapshot
from lsp_agent.core.secrets.filter import NO_SECRETS, SecretFilter
from lsp_agent.skills.catalog import SkillCatalog
from lsp_agent.system.git_files import git_dir_of, read_regular_file
from lsp_agent.workspace.context_read import FileBytes, Refused, read_confined

INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTIONS_BYTES = 64 * 1024

_log = logging.getLogger(__name__)


@attrs.frozen
class _Candidate:
    """An instructions file and the folders its real path must lie in."""

    path: str
    roots: tuple[str, ...]


class FileContextSources:
    def __init__(
        self,
        *,
        user_config_dir: Path,
        configured: Sequence[str] = (),
        skills: Callable[[Sequence[str]], SkillCatalog] | None = None,
        secrets: SecretFilter = NO_SECRETS,
    ) -> None:
        """``configured`` are the config file's ``instructions`` (relative to the first
        workspace folder); ``skills`` discovers the skills of some workspace folders;
        ``secrets`` masks the agent's keys in everything read."""
        self._user_dir = user_config_dir
        self._configured = tuple(configured)
        self._skills = skills
        self._secrets = secrets
        self._cache: dict[str, tuple[tuple[object, ...], InstructionSource]] = {}
        self._refusals_logged: set[tuple[str, str]] = set()

    async def collect(self, workspace_roots: Sequence[str], *, full: bool) -> SourcesSnapshot:
        roots = tuple(workspace_roots)
        instructions, skills, git = await asyncio.to_thread(self._read_files, roots, full=full)
        system = f"{platform.system()} {platform.release()}".strip() if full else ""
        return SourcesSnapshot(
            workspace_roots=roots,
            platform=system,
            git=git,
            instructions=instructions,
            skills=skills,
        )

    def _read_files(
        self, roots: tuple[str, ...], *, full: bool
    ) -> tuple[tuple[InstructionSource, ...], str, str]:
        candidates = [*self._project_files(roots), *self._configured_files(roots)]
        global_file = self._user_dir / "AGENTS.md"
        if os.path.lexists(global_file):
            candidates.append(_Candidate(str(global_file), (str(self._user_dir),)))
        seen: dict[str, InstructionSource] = {}
        for candidate in candidates:
            if candidate.path not in seen:
                seen[candidate.path] = self._read(candidate)
        listing = self._skills(roots).listing() if self._skills is not None else ""
        git = _git_summary(roots[0]) if full and roots else ""
        return tuple(seen.values()), self._secrets.redact(listing), git

    def _project_files(self, roots: tuple[str, ...]) -> list[_Candidate]:
        """AGENTS.md (else CLAUDE.md) in each folder from the workspace root up to the
        repository root (just the workspace root outside a repository). One in the
        workspace folder must lie in a workspace folder; one above it, in the repository."""
        found: list[_Candidate] = []
        for root in roots:
            folders = _up_to_repository(Path(root))
            allowed = (*roots, str(folders[-1]))
            for folder in reversed(folders):  # outermost first: general before specific
                for name in INSTRUCTION_NAMES:
                    candidate = folder / name
                    if os.path.lexists(candidate):
                        found.append(_Candidate(str(candidate), allowed))
                        break
        return found

    def _configured_files(self, roots: tuple[str, ...]) -> list[_Candidate]:
        """The config's ``instructions``: inside the workspace folders; an absolute entry
        (which only a trusted config layer can give) may also name the user config folder."""
        base = Path(roots[0]) if roots else Path.cwd()
        found = []
        for entry in self._configured:
            allowed = roots
            if Path(entry).is_absolute():
                allowed = (*roots, str(self._user_dir))
            found.append(_Candidate(os.path.normpath(base / entry), allowed))
        return found

    def _read(self, candidate: _Candidate) -> InstructionSource:
        path = candidate.path
        real = os.path.realpath(path)
        try:
            info = os.stat(real)
        except OSError:
            return self._read_now(candidate)  # outside (refused) or missing (an error)
        key = (real, candidate.roots, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        source = self._read_now(candidate)
        self._cache[path] = (key, source)
        return source

    def _read_now(self, candidate: _Candidate) -> InstructionSource:
        path = candidate.path
        result = read_confined(path, candidate.roots, limit=MAX_INSTRUCTIONS_BYTES)
        if isinstance(result, FileBytes) and b"\0" in result.data:
            result = Refused(reason="it is not a text file")
        if isinstance(result, Refused):
            if (path, result.reason) not in self._refusals_logged:
                self._refusals_logged.add((path, result.reason))
                _log.warning("instructions file %s not read: %s", path, result.reason)
            return InstructionSource(path=path, text=_refused_note(result.reason))
        if not isinstance(result, FileBytes):
            return InstructionSource(path=path, error=result.reason)
        text = self._secrets.mask(result.data.decode("utf-8", "replace")).with_note()
        if result.truncated:
            text = (
                f"{text.rstrip()}\n\n[lsp-agent: this file is longer than "
                f"{MAX_INSTRUCTIONS_BYTES // 1024} KiB; only its beginning is shown.]"
            )
        return InstructionSource(path=path, text=text)


def _refused_note(reason: str) -> str:
    return (
        f"[lsp-agent did not read this file: {reason}. Its instructions are not available; "
        "tell the user if they were expected.]"
    )


def _repository_root(folder: Path) -> Path | None:
    """The nearest of ``folder`` and its parents that holds ``.git``, or None."""
    return next((p for p in (folder, *folder.parents) if (p / ".git").exists()), None)


def _up_to_repository(root: Path) -> list[Path]:
    """``root`` and its parents up to the folder holding ``.git`` (only ``root`` if none)."""
    chain = [root]
    for parent in [root, *root.parents]:
        if (parent / ".git").exists():
            return chain
        if parent != root:
            chain.append(parent)
    return [root]


def _git_summary(root: str) -> str:
    """Whether ``root`` is in a git repository, and its branch, read from the repository's
    ``HEAD`` file (blocking: runs in the sources' thread). A ``git`` process for this cost
    ~5 ms before every turn's first request; an unborn branch is a branch here too. The
    files are read non-blocking and only when regular (a FIFO ``.git/HEAD`` never hangs the
    turn: it reads as no repository)."""
    top = _repository_root(Path(root))
    git_dir = git_dir_of(top) if top is not None else None
    data = read_regular_file(git_dir / "HEAD", 4096) if git_dir is not None else None
    if data is None:
        return "not a git repository"
    text = data.decode("utf-8", errors="replace").strip()
    if text.startswith("ref:"):
        return f"a git repository, branch {text[4:].strip().removeprefix('refs/heads/')}"
    return "a git repository (detached HEAD)"
