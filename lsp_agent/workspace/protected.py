"""One check for every file tool: an ``edit`` ask that touches a protected file is marked so
the gate sends it to a person, every time (``core/permission/protected.py`` has the list).

The tools (``write``, ``edit``, ``apply_patch``, any later tool of kind ``edit``) need not
know the list: :meth:`tools.base.ToolRunContext.ask` passes every request through
:func:`mark_protected`, which looks at each file the ask proposes a text for or deletes (its
previews), at the paths its subject names and at its patterns read as paths.
"""

from __future__ import annotations

import os

import attrs

from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.workspace.boundary import Resolved, WorkspaceBoundary, display_path

__all__ = ["mark_protected", "protected_note"]


def mark_protected(request: PermissionRequest, boundary: WorkspaceBoundary) -> PermissionRequest:
    """``request`` with ``protected`` set (and nothing an approval could save) when it writes
    a protected file; else ``request`` unchanged."""
    if request.permission != "edit":
        return request
    found: dict[str, str] = {}
    for path in [*_paths(request), *_pattern_paths(request, boundary)]:
        reason = boundary.protection(os.path.realpath(path))
        if reason is not None:
            found.setdefault(display_path(path, boundary.roots), reason)
    if not found:
        return request
    protected = tuple(f"{path}: {reason}" for path, reason in found.items())
    note = protected_note(protected)
    description = f"{request.description}\n\n{note}" if request.description else note
    return attrs.evolve(request, protected=protected, always=(), description=description)


def protected_note(protected: tuple[str, ...]) -> str:
    """What the person is shown about the protected files of an ask."""
    listed = "\n".join(f"- {line}" for line in protected)
    return (
        "Protected files (they can make programs run later); only you can approve this, "
        f"once:\n{listed}"
    )


def _pattern_paths(request: PermissionRequest, boundary: WorkspaceBoundary) -> list[str]:
    """The ask's patterns read as paths (workspace-relative display paths, or absolute): a
    tool that gives no previews is still judged by what it says it touches."""
    found: list[str] = []
    for pattern in request.patterns:
        where = boundary.resolve(pattern)
        found.append(where.path if isinstance(where, Resolved) else where.resolved)
    return found


def _paths(request: PermissionRequest) -> list[str]:
    paths = [preview.path for preview in request.previews]
    subject = request.subject or {}
    for entry in subject.get("files", ()) if isinstance(subject, dict) else ():
        if isinstance(entry, dict):
            paths += [p for p in (entry.get("path"), entry.get("movedFrom")) if isinstance(p, str)]
    return [p for p in dict.fromkeys(paths) if os.path.isabs(p)]
