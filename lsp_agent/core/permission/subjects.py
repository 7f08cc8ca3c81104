"""What a permission ask is about, shown to the person who answers it: one class per kind.

An ``edit`` names the files and carries their unified diff, a ``command`` the command line
and its folder, a ``fetch`` the url. :meth:`to_json` is the shape a ``permission_asked``
event stores (``{type: "edit", files, patch}``, ``{type: "command", command, cwd}``,
``{type: "fetch", url}``) and ACP's ask ``_meta`` carries; the front-ends read the fields.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs


@attrs.frozen(kw_only=True)
class EditedFileStat:
    """One file of an edit: its path (as the tool shows it), the lines it adds and removes;
    ``apply_patch`` also says its operation and, for a move, where it came from."""

    path: str
    additions: int = 0
    deletions: int = 0
    operation: str | None = None
    moved_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "path": self.path,
            "additions": self.additions,
            "deletions": self.deletions,
        }
        if self.operation is not None:
            entry["operation"] = self.operation
        if self.moved_from is not None:
            entry["movedFrom"] = self.moved_from
        return entry


@attrs.frozen(kw_only=True)
class EditSubject:
    files: tuple[EditedFileStat, ...] = ()
    patch: str = ""
    type: Literal["edit"] = "edit"

    def to_json(self) -> dict[str, Any]:
        return {"type": "edit", "files": [f.to_json() for f in self.files], "patch": self.patch}


@attrs.frozen(kw_only=True)
class CommandSubject:
    command: str
    cwd: str
    type: Literal["command"] = "command"

    def to_json(self) -> dict[str, Any]:
        return {"type": "command", "command": self.command, "cwd": self.cwd}


@attrs.frozen(kw_only=True)
class FetchSubject:
    url: str
    type: Literal["fetch"] = "fetch"

    def to_json(self) -> dict[str, Any]:
        return {"type": "fetch", "url": self.url}


Subject = EditSubject | CommandSubject | FetchSubject
"""What an ask is about, discriminated by ``type``."""


def subject_detail(subject: Subject | None) -> str | None:
    """The one line that says what the ask is about (the command, the url), if there is one."""
    match subject:
        case CommandSubject(command=command):
            return command or None
        case FetchSubject(url=url):
            return url or None
    return None
