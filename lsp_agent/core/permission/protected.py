"""Protected paths: files that make something run later, without anyone being asked.

A write to one of them is approved only by a person, for that exact write, every time: no
rule, no saved approval ("for this session", "always") and no ``--yes`` approves it (the gate
sends a request carrying ``protected`` straight to the person; a configured ``deny`` still
denies). Inside the command sandbox the ones at a workspace folder's top are read-only
(``sandbox/bwrap.py``).

What belongs here is what a tool *runs* (or trusts) on its own later: git's hooks and
configuration (``.git/**``), the agent's own configuration, and editor or tool files that
start programs or name interpreters when a folder is opened or entered. Ordinary build files
(``Makefile``, ``package.json``, ``pyproject.toml``) are not: the user runs those on purpose
and expects the agent to edit them.

This module is the list and the matching, as data; the workspace wall
(``workspace/protected.py``) applies it to real paths, the sandbox (``sandbox/protected.py``)
to the folders a command may write.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsp_agent.core.permission.rules import DEFAULT_OPTIONS

__all__ = [
    "PROTECTED_FILES",
    "PROTECTED_FOLDERS",
    "PROTECTED_OPTIONS",
    "SANDBOX_READ_ONLY",
    "config_reason",
    "protected_reason",
]

PROTECTED_FOLDERS: dict[str, str] = {
    ".git": "git's own data: hooks, configuration (fsmonitor, filters, aliases) run programs",
    ".vscode": "VS Code settings, tasks and launch configurations can run programs",
    ".idea": "JetBrains run configurations and tool settings can run programs",
    ".husky": "husky installs these as git hooks",
    ".devcontainer": "a dev container definition runs commands when the folder is opened",
}
"""A folder name (at any depth) whose whole content is protected, and why."""

PROTECTED_FILES: dict[str, str] = {
    ".envrc": "direnv runs it on entering the folder",
    ".exrc": "Vim and Neovim run it when started in the folder (exrc)",
    ".nvimrc": "Neovim runs it when started in the folder (exrc)",
    ".nvim.lua": "Neovim runs it when started in the folder (exrc)",
    ".lazy.lua": "lazy.nvim runs it when Neovim starts in the folder",
    ".dir-locals.el": "Emacs applies it (eval forms included) to every file below",
    ".dir-locals-2.el": "Emacs applies it (eval forms included) to every file below",
    ".pre-commit-config.yaml": "pre-commit runs the hooks it names at each commit",
}
"""A file name (at any depth) that is protected, and why."""

PROTECTED_OPTIONS = tuple(o for o in DEFAULT_OPTIONS if o.kind in ("allow_once", "reject_once"))
"""What a person is offered for a protected write: once, or not at all."""

_AGENT_CONFIG = "the agent's own configuration (permissions, commands it runs)"

SANDBOX_READ_ONLY: tuple[str, ...] = (
    *(name for name in PROTECTED_FOLDERS if name != ".git"),
    *PROTECTED_FILES,
    ".lsp-agent.json",
    ".git/config",
    ".git/hooks",
    ".git/info",
)
"""What the command sandbox mounts read-only at each workspace folder's top (the rest of
``.git`` stays writable, so ``git add`` and ``git commit`` from ``bash`` work)."""


def protected_reason(parts: Sequence[str]) -> str | None:
    """Why the path made of ``parts`` (its components below the workspace folder, or of an
    absolute path outside every folder) is protected; None when it is not.

    Names compare without case, as on a case-insensitive file system.
    """
    lowered = [part.lower() for part in parts]
    for part in lowered[:-1]:
        if part in PROTECTED_FOLDERS:
            return PROTECTED_FOLDERS[part]
    if not lowered:
        return None
    name = lowered[-1]
    if name in PROTECTED_FOLDERS:
        return PROTECTED_FOLDERS[name]
    if name in PROTECTED_FILES:
        return PROTECTED_FILES[name]
    if name.startswith(".lsp-agent") and name.endswith(".json"):
        return _AGENT_CONFIG
    return None


def config_reason() -> str:
    """Why a configuration file the agent reads (``LSP_AGENT_CONFIG``, the user's own) is
    protected."""
    return _AGENT_CONFIG
