"""The permissions a tool may ask for: one closed list, declared by each tool.

A tool names the permission it is governed by (``Tool.permission``); that one value is what
its asks use, what the rules and a mode's limits match, and what hides it from the model.
Some asks are shared by every tool that needs them: ``external_directory`` (a path outside
the workspace) and ``bash_network`` (a command that wants the network).

The values are the strings the configuration's ``permission`` rules name
(docs/permissions.md): a :class:`~enum.StrEnum`, so a kind *is* its string wherever rules
are matched, events recorded or an ask shown.
"""

from __future__ import annotations

from enum import StrEnum, unique

__all__ = ["PermissionKind"]


@unique
class PermissionKind(StrEnum):
    READ = "read"
    """Reading a file or asking the editor about the code (definitions, references…)."""
    LIST = "list"
    GLOB = "glob"
    GREP = "grep"
    TODOWRITE = "todowrite"
    QUESTION = "question"
    DIAGNOSTICS = "diagnostics"
    TASK = "task"
    SKILL = "skill"
    EDIT = "edit"
    """Any change to a file: ``write``, ``edit``, ``apply_patch``."""
    BASH = "bash"
    WEBFETCH = "webfetch"
    EXTERNAL_DIRECTORY = "external_directory"
    """A path outside every workspace folder (any tool)."""
    BASH_NETWORK = "bash_network"
    """A command that asks for the network (``bash`` with ``network: true``)."""
    MCP = "mcp"
    """Every tool of an MCP server."""
