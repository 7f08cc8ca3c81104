"""Where the baseline note's facts come from: instruction files, skills, git, the platform.

Reads are cheap on purpose — they run before every model call to notice changes: files are
re-read only when their size or modification time changed, and git is asked only for a new
baseline (with ``GIT_OPTIONAL_LOCKS=0``, so reading status never rewrites the index).
"""

from __future__ import annotations

import asyncio
import os
import platform
from collections.abc import Callable, Sequence
from pathlib import Path

from lsp_agent.core.context import InstructionSource, SourcesSnapshot
from lsp_agent.tools.skills import SkillCatalog

INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTIONS_BYTES = 256 * 1024


class FileContextSources:
    def __init__(
        self,
        *,
        user_config_dir: Path,
        configured: Sequence[str] = (),
        skills: Callable[[Sequence[str]], SkillCatalog] | None = None,
    ) -> None:
        """``configured`` are the config file's ``instructions`` (relative to the first
        workspace folder); ``skills`` discovers the skills of some workspace folders."""
        self._user_dir = user_config_dir
        self._configured = tuple(configured)
        self._skills = skills
        self._cache: dict[str, tuple[tuple[int, int], InstructionSource]] = {}

    async def collect(self, workspace_roots: Sequence[str], *, full: bool) -> SourcesSnapshot:
        roots = tuple(workspace_roots)
        instructions, skills = await asyncio.to_thread(self._read_files, roots)
        git = await _git_summary(roots[0]) if full and roots else ""
        system = f"{platform.system()} {platform.release()}".strip() if full else ""
        return SourcesSnapshot(
            workspace_roots=roots,
            platform=system,
            git=git,
            instructions=instructions,
            skills=skills,
        )

    def _read_files(self, roots: tuple[str, ...]) -> tuple[tuple[InstructionSource, ...], str]:
        paths = [*self._project_files(roots), *self._configured_files(roots)]
        global_file = self._user_dir / "AGENTS.md"
        if global_file.exists():
            paths.append(str(global_file))
        seen: dict[str, InstructionSource] = {}
        for path in paths:
            if path not in seen:
                seen[path] = self._read(path)
        listing = self._skills(roots).listing() if self._skills is not None else ""
        return tuple(seen.values()), listing

    def _project_files(self, roots: tuple[str, ...]) -> list[str]:
        """AGENTS.md (else CLAUDE.md) in each folder from the workspace root up to the
        repository root (just the workspace root outside a repository)."""
        found: list[str] = []
        for root in roots:
            folders = _up_to_repository(Path(root))
            for folder in reversed(folders):  # outermost first: general before specific
                for name in INSTRUCTION_NAMES:
                    candidate = folder / name
                    if os.path.lexists(candidate):
                        found.append(str(candidate))
                        break
        return found

    def _configured_files(self, roots: tuple[str, ...]) -> list[str]:
        base = Path(roots[0]) if roots else Path.cwd()
        return [str((base / entry).resolve()) for entry in self._configured]

    def _read(self, path: str) -> InstructionSource:
        try:
            info = os.stat(path)
        except OSError as error:
            return InstructionSource(path=path, error=error.strerror or str(error))
        key = (info.st_size, info.st_mtime_ns)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        source = _read_text(path)
        self._cache[path] = (key, source)
        return source


def _read_text(path: str) -> InstructionSource:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_INSTRUCTIONS_BYTES + 1)
    except OSError as error:
        return InstructionSource(path=path, error=error.strerror or str(error))
    if len(data) > MAX_INSTRUCTIONS_BYTES:
        data = data[:MAX_INSTRUCTIONS_BYTES]
    return InstructionSource(path=path, text=data.decode("utf-8", "replace"))


def _up_to_repository(root: Path) -> list[Path]:
    """``root`` and its parents up to the folder holding ``.git`` (only ``root`` if none)."""
    chain = [root]
    for parent in [root, *root.parents]:
        if (parent / ".git").exists():
            return chain
        if parent != root:
            chain.append(parent)
    return [root]


async def _git_summary(root: str) -> str:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        process = await asyncio.create_subprocess_exec(
            "git", "rev-parse", "--abbrev-ref", "HEAD",
            cwd=root,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        out, _ = await asyncio.wait_for(process.communicate(), timeout=5)
    except (OSError, TimeoutError):
        return ""
    if process.returncode != 0:
        return "not a git repository"
    branch = out.decode().strip()
    return (
        f"a git repository, branch {branch}"
        if branch != "HEAD"
        else "a git repository (detached HEAD)"
    )
