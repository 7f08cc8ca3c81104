"""Make the agent's own process unreadable by the programs it starts.

A command runs as the agent's user, and a same-user process may read another's
``/proc/<pid>/environ`` (the provider keys) and ``/proc/<pid>/mem`` — unless that process is
not *dumpable*. ``PR_SET_DUMPABLE`` 0 makes the kernel refuse those reads (and ``ptrace``) to
every process without ``CAP_SYS_PTRACE`` (or, measured, ``CAP_SYS_ADMIN`` or
``CAP_PERFMON``); it is reset by ``execve``, so the commands themselves stay ordinary. Root
has those capabilities: the command supervisor drops them from a command's bounding set, and
the sandbox drops every capability and hides the agent in its PID namespace
(``docs/security.md``).
"""

from __future__ import annotations

from lsp_agent.system.prctl import PR_GET_DUMPABLE, PR_SET_DUMPABLE, prctl_function

__all__ = ["forbid_inspection", "inspection_forbidden"]


def forbid_inspection() -> bool:
    """Clear this process's dumpable flag; whether it is now clear (False off Linux)."""
    prctl = prctl_function()
    if prctl is None:
        return False
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    return inspection_forbidden()


def inspection_forbidden() -> bool:
    """Whether this process is not dumpable."""
    prctl = prctl_function()
    return prctl is not None and prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
