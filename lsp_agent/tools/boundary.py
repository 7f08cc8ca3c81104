"""The workspace boundary: every path argument a tool takes is resolved here first.

A path is joined to the first workspace root when relative (``~`` is not expanded: it is an
ordinary name), then ``os.path.realpath``-ed, and must land inside a root. Non-strict
``realpath`` follows every symlink that exists, dangling ones included, and keeps the missing
tail as written, so a file that does not exist yet is judged by where its existing parent
really is. The answer is a value: :class:`Resolved` or :class:`Outside`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import attrs

__all__ = ["Outside", "Resolution", "Resolved", "WorkspaceBoundary"]


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

    @property
    def message(self) -> str:
        where = self.path if self.path == self.resolved else f"{self.path} (-> {self.resolved})"
        roots = ", ".join(self.roots)
        return (
            f"{where} is outside the workspace ({roots}); "
            "access to other folders needs the external_directory permission"
        )


Resolution = Resolved | Outside


class WorkspaceBoundary:
    """The workspace roots, realpath-ed once, and the one place paths are checked."""

    def __init__(self, roots: Sequence[str | Path]) -> None:
        if not roots:
            raise ValueError("a workspace boundary needs at least one root")
        # dict.fromkeys: drop duplicates, keep order (the first root is the default one).
        self._roots = tuple(dict.fromkeys(os.path.realpath(os.fspath(root)) for root in roots))

    @property
    def roots(self) -> tuple[str, ...]:
        return self._roots

    def resolve(self, path: str, *, extra_roots: Sequence[str | Path] = ()) -> Resolution:
        """Resolve ``path``; inside a root (or one of ``extra_roots``) → Resolved."""
        real = os.path.realpath(os.path.join(self._roots[0], path))
        for root in self._roots:
            if _contains(root, real):
                return Resolved(path=real, root=root, display=_relative(real, root))
        for extra in extra_roots:
            root = os.path.realpath(os.fspath(extra))
            if _contains(root, real):
                return Resolved(path=real, root=root, display=real)
        return Outside(path=path, resolved=real, roots=self._roots)


def _contains(root: str, path: str) -> bool:
    # commonpath compares whole components, so /ws-other is not inside /ws.
    return os.path.commonpath([root, path]) == root


def _relative(path: str, root: str) -> str:
    return os.path.relpath(path, root) if path != root else "."
