"""Where the warm process lives, which one a client may use, and who may open it.

Stdlib only and cheap: the client imports this before anything else of the agent.

One warm process serves one *interpreter setup*: the Python executable, the installed package's
folder and the variables that take effect only when an interpreter starts (``PYTHON*``, the
locale). Everything else of a run's environment (provider keys and base URLs, ``LSP_AGENT_*``,
``HOME``/``XDG_*``, ``PATH``) is applied to each run's own forked child, so one process serves
every environment of the user's shells.
"""

from __future__ import annotations

import os
import stat
import sys
import zlib
from collections.abc import Mapping
from typing import NamedTuple

import lsp_agent

APP_NAME = "lsp-agent"
VERSION_OVERRIDE = "LSP_AGENT_DAEMON_VERSION"
"""Tests only: the version a started warm process claims (an older install still running)."""
_STARTUP_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE")
"""Read once when an interpreter starts (stdio encoding), so they pick the process."""


class UnsafeFolder(Exception):
    """The runtime folder is not private to this user: no warm path."""


class DaemonPaths(NamedTuple):
    folder: str
    key: str

    @property
    def socket(self) -> str:
        return os.path.join(self.folder, f"{self.key}.sock")

    @property
    def log(self) -> str:
        return os.path.join(self.folder, f"{self.key}.log")

    @property
    def lock(self) -> str:
        return os.path.join(self.folder, f"{self.key}.lock")


def runtime_base(env: Mapping[str, str]) -> str:
    """``$XDG_RUNTIME_DIR``, else ``/run/user/<uid>``, else ``/tmp/runtime-<uid>`` (platformdirs'
    rule for the user's runtime folder on Linux)."""
    xdg = env.get("XDG_RUNTIME_DIR", "").strip()
    if xdg and os.path.isabs(xdg):
        return xdg
    uid = os.geteuid()
    run_user = f"/run/user/{uid}"
    if os.path.isdir(run_user):
        return run_user
    return f"/tmp/runtime-{uid}"


def private_folder(env: Mapping[str, str]) -> str:
    """``<runtime>/lsp-agent``, created 0700; refused unless it is a real folder of ours that
    nobody else can enter (a socket in a folder others can reach could be swapped)."""
    base = runtime_base(env)
    folder = os.path.join(base, APP_NAME)
    for path in (base, folder):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as error:
            raise UnsafeFolder(f"{path}: {error.strerror}") from None
    for path in (base, folder):  # whoever owns the parent could swap the folder
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            raise UnsafeFolder(f"{path} is not a folder of this user")
    if info.st_mode & 0o077:
        raise UnsafeFolder(f"{folder} may be opened by other users (mode {info.st_mode:o})")
    return folder


def daemon_paths(env: Mapping[str, str]) -> DaemonPaths:
    return DaemonPaths(folder=private_folder(env), key=interpreter_key(env))


def interpreter_key(env: Mapping[str, str]) -> str:
    """16 hex digits naming the interpreter setup (see the module's docstring)."""
    parts = [sys.executable, package_folder()]
    parts += sorted(
        f"{name}={value}"
        for name, value in env.items()
        if name.startswith("PYTHON") or name in _STARTUP_VARIABLES
    )
    data = "\0".join(parts).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def package_folder() -> str:
    return os.path.dirname(os.path.abspath(lsp_agent.__file__))


def installed_version() -> str:
    """``__version__`` and the newest change of the installed package's files: an upgrade or
    an edited checkout is a new version, so a warm process never runs code that is gone."""
    newest = 0
    stack = [package_folder()]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    newest = max(newest, entry.stat(follow_symlinks=False).st_mtime_ns)
    return f"{lsp_agent.__version__}+{newest:x}"
