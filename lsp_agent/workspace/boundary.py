"""The workspace boundary: every path argument a tool takes is resolved here first.

A path is joined to the first workspace root when relative (``~`` is not expanded: it is an
ordinary name), then ``os.path.realpath``-ed, and must land inside a root. Non-strict
``realpath`` follows every symlink that exists, dangling ones included, and keeps the missing
tail as written, so a file that does not exist yet is judged by where its existing parent
really is. The answer is a value: :class:`Resolved` or :class:`Outside`.

The agent's own data folder (``LSP_AGENT_DATA_DIR``, else the platform's user data folder:
the session database, spill files, snapshots) is never inside, even when it lies inside a
workspace folder: a path in it is :class:`Outside` with ``hidden`` set. Only an explicitly
granted extra root (this session's spill folder) is readable there. The user's credential
stores (``~/.ssh``, ``~/.netrc``, ``~/.docker``…, ``lsp_agent.system.credentials``) are hidden
the same way, even when the workspace is ``$HOME`` — unless one of them contains a workspace
folder (hiding it would hide the whole workspace).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs
import platformdirs

from lsp_agent.system.credentials import real_credential_paths

__all__ = [
    "Outside",
    "Resolution",
    "Resolved",
    "WorkspaceBoundary",
    "agent_data_folder",
    "credential_folders",
    "hidden_search_globs",
]


def data_folder_path(env: Mapping[str, str]) -> Path:
    """``LSP_AGENT_DATA_DIR``, else the platform's user data folder (as configured, not
    resolved)."""
    configured = env.get("LSP_AGENT_DATA_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_data_dir("lsp-agent"))


def agent_data_folder(env: Mapping[str, str] | None = None) -> str:
    """The agent's data folder, realpath-ed, for the wall every tool must not cross."""
    return os.path.realpath(data_folder_path(os.environ if env is None else env))


@attrs.frozen(kw_only=True)
class Resolved:
    """A path inside the boundary."""

    path: str
    """The absolute, realpath-ed path."""
    root: str
    """The root (workspace folder or extra root) that contains ``path``."""
    display: str
    """What people and the model see: relative to a workspace root, absolute otherwise."""


@attrs.frozen(kw_only=True)
class Outside:
    """A path that leaves every root. ``message`` is written for the model."""

    path: str
    """The path as the caller gave it."""
    resolved: str
    """Where it really points."""
    roots: tuple[str, ...]
    """The workspace roots it was checked against."""
    hidden: bool = False
    """It lies in the agent's own data folder or a credential store, which no tool may
    touch."""
    hidden_what: str = "the agent's own data folder"
    """What the hidden place is, for the message."""

    @property
    def message(self) -> str:
        where = self.path if self.path == self.resolved else f"{self.path} (-> {self.resolved})"
        roots = ", ".join(self.roots)
        if self.hidden:
            return (
                f"{where} is outside the workspace: it lies in {self.hidden_what}, "
                "which no tool may access"
            )
        return (
            f"{where} is outside the workspace ({roots}); "
            "access to other folders needs the external_directory permission"
        )


Resolution = Resolved | Outside


class WorkspaceBoundary:
    """The workspace roots, realpath-ed once, and the one place paths are checked."""

    def __init__(
        self,
        roots: Sequence[str | Path],
        *,
        hidden: Sequence[str | Path] | None = None,
        credentials: Sequence[str | Path] | None = None,
    ) -> None:
        """``hidden``: folders no path may enter (default: :func:`agent_data_folder`);
        ``credentials``: credential stores, hidden too (default: :func:`credential_folders`
        of this process's environment)."""
        if not roots:
            raise ValueError("a workspace boundary needs at least one root")
        # dict.fromkeys: drop duplicates, keep order (the first root is the default one).
        self._roots = tuple(dict.fromkeys(os.path.realpath(os.fspath(root)) for root in roots))
        folders = (agent_data_folder(),) if hidden is None else hidden
        self._data = tuple(os.path.realpath(os.fspath(folder)) for folder in folders)
        stores = (
            credential_folders(os.environ)
            if credentials is None
            else tuple(os.path.realpath(os.fspath(store)) for store in credentials)
        )
        self._credentials = _not_around(stores, self._roots)
        self._hidden = (*self._data, *self._credentials)

    @property
    def hidden(self) -> tuple[str, ...]:
        """The places no tool may touch (the agent's data folder, the credential stores)."""
        return self._hidden

    def hides(self, path: str) -> bool:
        """Whether the absolute ``path`` (realpath-ed) lies in a hidden place."""
        return any(_contains(folder, path) for folder in self._hidden)

    def _hidden_what(self, path: str) -> str:
        for store in self._credentials:
            if _contains(store, path):
                return f"a credential store ({store})"
        return "the agent's own data folder"

    @property
    def roots(self) -> tuple[str, ...]:
        return self._roots

    def resolve(self, path: str, *, extra_roots: Sequence[str | Path] = ()) -> Resolution:
        """Resolve ``path``; inside a root (or one of ``extra_roots``) → Resolved."""
        real = os.path.realpath(os.path.join(self._roots[0], path))
        if self.hides(real):
            for extra in extra_roots:
                root = os.path.realpath(os.fspath(extra))
                if _contains(root, real) and not any(
                    _contains(root, folder) for folder in self._hidden
                ):
                    return Resolved(path=real, root=root, display=real)
            return Outside(
                path=path,
                resolved=real,
                roots=self._roots,
                hidden=True,
                hidden_what=self._hidden_what(real),
            )
        for root in self._roots:
            if _contains(root, real):
                return Resolved(path=real, root=root, display=_relative(real, root))
        for extra in extra_roots:
            root = os.path.realpath(os.fspath(extra))
            if _contains(root, real):
                return Resolved(path=real, root=root, display=real)
        return Outside(path=path, resolved=real, roots=self._roots)


def credential_folders(env: Mapping[str, str]) -> tuple[str, ...]:
    """The credential stores of ``env`` (``lsp_agent.system.credentials``), realpath-ed."""
    return real_credential_paths(env)


def hidden_search_globs(folder: str, hidden: Sequence[str] | None = None) -> list[str]:
    """rg ``--glob`` arguments that keep a search run from ``folder`` out of the hidden
    places under it (default: the agent's data folder and the credential stores), whatever
    else is included."""
    real = os.path.realpath(folder)
    folders = (
        (agent_data_folder(), *_not_around(credential_folders(os.environ), (real,)))
        if hidden is None
        else hidden
    )
    globs = []
    for entry in folders:
        inner = os.path.realpath(entry)
        if inner != real and _contains(real, inner):
            relative = _GLOB_SPECIAL.sub(r"\\\g<0>", os.path.relpath(inner, real))
            globs.append(f"--glob=!/{relative}")
    return globs


_GLOB_SPECIAL = re.compile(r"[*?\[\]{}\\!]")


def display_path(path: str, folders: Sequence[str]) -> str:
    """``path`` relative to the first of ``folders`` it lies in, else as it is (for messages
    and notes, not a check: :meth:`WorkspaceBoundary.resolve` is the wall)."""
    for folder in folders:
        if path.startswith(folder.rstrip("/") + "/"):
            return os.path.relpath(path, folder)
    return path


def holding_folder(path: str, folders: Sequence[str]) -> str | None:
    """The deepest of ``folders`` that ``path`` (real) lies in, else the first folder; None
    when there is none (where a session for ``path`` starts, not a check)."""
    holding = [f for f in folders if path == f or path.startswith(f.rstrip("/") + "/")]
    if holding:
        return max(holding, key=len)
    return folders[0] if folders else None


def _not_around(stores: tuple[str, ...], roots: Sequence[str]) -> tuple[str, ...]:
    """``stores`` less those that contain a root (hiding one would hide the workspace)."""
    return tuple(store for store in stores if not any(_contains(store, r) for r in roots))


def _contains(root: str, path: str) -> bool:
    # commonpath compares whole components, so /ws-other is not inside /ws.
    return os.path.commonpath([root, path]) == root


def _relative(path: str, root: str) -> str:
    return os.path.relpath(path, root) if path != root else "."
