"""The only way the agent runs git: a program found outside the project, a scrubbed
environment, and nothing of a repository's configuration that could start a program.

The agent runs git outside the command sandbox (snapshots, ``#diff``), on repositories a
command the model ran may have rewritten (``.git/config``, ``.git/hooks``, an
``include.path``). So every call:

- runs the ``git`` found by :func:`~lsp_agent.system.programs.find_program`, never one in a
  workspace folder nor on a relative ``PATH`` entry;
- gets an environment built from nothing: ``PATH`` (its trusted entries only), an empty
  private ``HOME`` and ``XDG_CONFIG_HOME``, ``LC_ALL=C``, no system or global configuration,
  no terminal prompt, no optional locks, no pager, no lazy fetch — no provider key or any
  other variable of ours, and no inherited ``GIT_*`` but the locations the caller names;
- overrides on the command line (``-c``, which wins over every file and reaches git's own
  child processes) each key that names a program or turns one on: ``core.fsmonitor``,
  ``core.hooksPath``, ``core.pager``, editors, ``core.sshCommand``, ``core.askPass``,
  credential helpers, ``diff.external``, ``gpg.*.program``, ``core.alternateRefsCommand``,
  and forbids every transport (``protocol.allow=never``), so a missing object is never
  fetched through a configured remote;
- has a timeout, after which its whole process group is killed.

What ``-c`` cannot reach by name: ``diff.<driver>.textconv`` and ``.command`` are turned
off by the flags :func:`run_git` adds to every command that renders a diff
(``--no-ext-diff --no-textconv``); ``filter.<driver>.clean/smudge/process`` run whenever git
hashes or writes work-tree content under the repository's own configuration, so callers never
do that on a project's repository (only plumbing that reads it: ``rev-parse``,
``check-ignore``, ``ls-files`` of the index, ``config --get``); a work tree is compared only
in a git dir of ours whose configuration defines no driver (the snapshots' shadow, and
:mod:`lsp_agent.snapshots.head_diff`).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Collection, Mapping, Sequence

from lsp_agent.system.programs import find_program, trusted_search_path

__all__ = [
    "DEFAULT_TIMEOUT",
    "LOCATION_VARIABLES",
    "NEUTRAL_CONFIG",
    "GitFailure",
    "GitResult",
    "git_argv_prefix",
    "git_environment",
    "ok",
    "run_git",
    "safe_args",
]

DEFAULT_TIMEOUT = 60.0
"""Seconds a git command may take (a FIFO where git expects a file never hangs a run)."""

LOCATION_VARIABLES = frozenset(
    {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR"}
)
"""The only ``GIT_*`` variables a caller may pass: where the repository is."""

_NOOP = ":"
"""A program value that runs nothing: git does not start an editor named ``:``, and
through the shell it is the no-op builtin."""

NEUTRAL_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.useBuiltinFSMonitor", "false"),
    ("core.untrackedCache", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", _NOOP),
    ("sequence.editor", _NOOP),
    ("core.sshCommand", _NOOP),
    ("ssh.variant", "ssh"),
    ("core.askPass", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("diff.submodule", "short"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("gpg.program", _NOOP),
    ("gpg.openpgp.program", _NOOP),
    ("gpg.x509.program", _NOOP),
    ("gpg.ssh.program", _NOOP),
    ("gpg.ssh.defaultKeyCommand", _NOOP),
    ("log.showSignature", "false"),
    ("protocol.allow", "never"),
    ("fetch.recurseSubmodules", "false"),
    ("safe.bareRepository", "explicit"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
"""Every key that can make git start a program, set to a value that starts none."""


_RENDERS_DIFFS = frozenset({"diff", "log", "show", "whatchanged", "format-patch"})
_TEXTCONV_ONLY = frozenset({"grep", "blame", "annotate"})


def safe_args(args: Sequence[str]) -> list[str]:
    """``args`` with ``--no-ext-diff --no-textconv`` after a subcommand that renders diffs
    (``--no-textconv`` after ``grep``/``blame``): a repository's diff drivers never run."""
    out = list(args)
    i = 0
    while i < len(out) and out[i].startswith("-"):
        i += 2 if out[i] in ("-c", "-C", "--config-env") else 1
    if i < len(out):
        if out[i] in _RENDERS_DIFFS:
            out[i + 1 : i + 1] = ["--no-ext-diff", "--no-textconv"]
        elif out[i] in _TEXTCONV_ONLY:
            out[i + 1 : i + 1] = ["--no-textconv"]
    return out


def git_argv_prefix(executable: str) -> list[str]:
    """``git --no-pager -c key=value…``: what every command line starts with."""
    argv = [executable, "--no-pager"]
    for key, value in NEUTRAL_CONFIG:
        argv += ["-c", f"{key}={value}"]
    return argv


@functools.cache
def _empty_home() -> str:
    """An empty private folder for ``HOME`` (one per process, removed at exit)."""
    home = tempfile.mkdtemp(prefix="lsp-agent-git-home-")
    atexit.register(shutil.rmtree, home, True)
    return home


def git_environment(
    locations: Mapping[str, str], *, path: str | None, avoid: Sequence[str]
) -> dict[str, str]:
    """The whole environment of a git process (see the module's note); ``locations``:
    ``GIT_DIR`` and the like (other names are ignored)."""
    home = _empty_home()
    env = {
        "PATH": os.pathsep.join(trusted_search_path(path, avoid)) or os.defpath,
        "HOME": home,
        "XDG_CONFIG_HOME": home,
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_NO_LAZY_FETCH": "1",
        "GIT_PAGER": "cat",
        "PAGER": "cat",
    }
    env.update({k: v for k, v in locations.items() if k in LOCATION_VARIABLES})
    return env


@dataclasses.dataclass(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes


@dataclasses.dataclass(frozen=True)
class GitFailure:
    """git could not be run, or did not finish in time; ``reason`` says which."""

    reason: str


def run_git(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    avoid: Sequence[str],
    locations: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    path: str | None = None,
    executable: str | None = None,
) -> GitResult | GitFailure:
    """Run ``git args`` as the module's note says (blocking).

    ``avoid``: the folders git must not be taken from (the workspace folders); ``path``:
    the ``PATH`` to search (default: ours); ``executable``: a git to use instead, still
    refused inside ``avoid``.
    """
    search = os.environ.get("PATH", os.defpath) if path is None else path
    git = find_program(executable or "git", path=search, avoid=avoid)
    if git is None:
        where = f" ({executable})" if executable else ""
        return GitFailure(f"git{where} was not found outside the workspace folders")
    env = git_environment(locations or {}, path=search, avoid=avoid)
    try:
        proc = subprocess.Popen(
            [*git_argv_prefix(git), *safe_args(args)],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        return GitFailure(f"could not run git: {error.strerror or error}")
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return GitFailure(f"git {args[0] if args else ''} took more than {timeout:g} s")
    except BaseException:
        _kill_group(proc)
        raise
    return GitResult(proc.returncode, out, err)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        proc.communicate(timeout=5)


def ok(result: GitResult | GitFailure, codes: Collection[int] = (0,)) -> bool:
    """Whether git ran and answered one of ``codes``."""
    return isinstance(result, GitResult) and result.returncode in codes
