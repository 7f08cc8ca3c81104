"""One check for every file tool: an ``edit`` ask that touches a protected file is marked so
the gate sends it to a person, every time (``core/permission/protected.py`` has the list).

The tools (``write``, ``edit``, ``apply_patch``, any later tool of kind ``edit``) need not
know the list: :meth:`tools.base.ToolRunContext.ask` passes every request through
:func:`mark_protected`, which looks at each file the ask proposes a text for or deletes (its
previews), at the paths its subject names and at its patterns read as paths.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs
import platformdirs

from lsp_agent.core.permission.protected import config_reason, protected_reason
from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.core.permission.subjects import EditSubject
from lsp_agent.workspace.boundary import Resolved, WorkspaceBoundary, display_path

__all__ = ["agent_config_files", "mark_protected", "protected_note", "protection"]


def mark_protected(
    request: PermissionRequest,
    boundary: WorkspaceBoundary,
    config_files: Sequence[str] | None = None,
) -> PermissionRequest:
    """``request`` with ``protected`` set (and nothing an approval could save) when it writes
    a protected file; else ``request`` unchanged. ``config_files``: the agent's own
    configuration files (default: :func:`agent_config_files` of this process)."""
    if request.permission != "edit":
        return request
    configs = agent_config_files(boundary.roots[0]) if config_files is None else config_files
    found: dict[str, str] = {}
    for path in [*_paths(request), *_pattern_paths(request, boundary)]:
        reason = protection(os.path.realpath(path), boundary.roots, configs)
        if reason is not None:
            found.setdefault(display_path(path, boundary.roots), reason)
    if not found:
        return request
    protected = tuple(f"{path}: {reason}" for path, reason in found.items())
    note = protected_note(protected)
    description = f"{request.description}\n\n{note}" if request.description else note
    return attrs.evolve(request, protected=protected, always=(), description=description)


def protection(path: str, roots: Sequence[str], config_files: Sequence[str]) -> str | None:
    """Why writing ``path`` (absolute, realpath-ed) needs a person's approval every time
    (``core/permission/protected.py``); None when it does not. Names are judged below the
    workspace folder holding the path (every component when it lies outside them all)."""
    if path in {os.path.realpath(f) for f in config_files}:
        return config_reason()
    for root in roots:
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return protected_reason(Path(os.path.relpath(path, root)).parts)
    return protected_reason(Path(path).parts[1:])


def agent_config_files(first_root: str, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The configuration files the agent reads besides the project's ``.lsp-agent.json``:
    the file ``LSP_AGENT_CONFIG`` names (relative to the first workspace folder) and the
    user's own ``config.json`` (the XDG rule ``config.load.user_config_file`` follows on
    Linux). Writing them is protected like the named files."""
    env = os.environ if env is None else env
    found: list[str] = []
    named = env.get("LSP_AGENT_CONFIG", "").strip()
    home = env.get("HOME") or str(Path.home())
    if named:
        expanded = home + named[1:] if named == "~" or named.startswith("~/") else named
        found.append(os.path.join(first_root, expanded))
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = xdg if xdg.strip() else os.path.join(home, ".config")
    found.append(os.path.join(base, "lsp-agent", "config.json"))
    platform = platformdirs.user_config_dir("lsp-agent", appauthor=False)  # macOS, Windows
    found.append(os.path.join(platform, "config.json"))
    return tuple(found)


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
    if isinstance(request.subject, EditSubject):
        for entry in request.subject.files:
            paths += [p for p in (entry.path, entry.moved_from) if p is not None]
    return [p for p in dict.fromkeys(paths) if os.path.isabs(p)]
