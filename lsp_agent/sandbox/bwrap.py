"""The ``bwrap`` command line for one command under a :class:`SandboxPolicy`.

The whole filesystem is mounted read-only, then mounts are layered on top, the more specific
path winning (a workspace inside ``$HOME`` stays visible; ``$HOME`` inside a workspace is
still hidden): fresh ``/dev`` and ``/proc``, an empty ``/tmp`` and ``/run`` (``/run`` holds
the sockets of Docker, D-Bus and the keyring, which a read-only mount would still let a
program connect to), ``$HOME`` replaced by an empty folder, ``allow_read`` paths read-only,
writable folders read-write — and, last, the data folder hidden whatever is around it.

Namespaces: PID (the agent is out of sight, and every process ends when the command does),
IPC, network unless allowed (a new network namespace has only its own loopback), cgroup
where possible. ``--die-with-parent`` ends the sandbox with the agent; all capabilities are
dropped (root inside would otherwise keep ``CAP_SYS_ADMIN`` and could unmount the walls).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Literal

from lsp_agent.sandbox.policy import SandboxPolicy

__all__ = ["DNS_FOLDERS", "bwrap_argv", "isolation_flags"]

DNS_FOLDERS = ("/run/systemd/resolve", "/run/resolvconf", "/run/NetworkManager")
"""Where ``/etc/resolv.conf`` may point into ``/run``: shown again when there is network."""

_Kind = Literal["tmpfs", "ro", "rw"]
_ORDER: dict[_Kind, int] = {"tmpfs": 0, "ro": 1, "rw": 2}


def isolation_flags(*, network: bool) -> list[str]:
    """The namespace and privilege flags (shared with the availability probe)."""
    flags = ["--unshare-pid", "--unshare-ipc", "--unshare-cgroup-try"]
    if not network:
        flags.append("--unshare-net")
    flags += ["--die-with-parent", "--cap-drop", "ALL"]
    return flags


def bwrap_argv(
    bwrap: str,
    policy: SandboxPolicy,
    *,
    workdir: str,
    command: Sequence[str],
    env: Mapping[str, str],
) -> list[str]:
    """``bwrap … -- command`` running ``command`` in ``workdir`` under ``policy``."""
    argv = [bwrap, *_base(policy)]
    layers: list[tuple[str, _Kind]] = [("/tmp", "tmpfs")]
    if os.path.isdir("/run"):
        layers.append(("/run", "tmpfs"))
        if policy.network:
            layers += [(p, "ro") for p in DNS_FOLDERS if os.path.isdir(p)]
    if policy.home is not None:
        layers.append((policy.home, "tmpfs"))
    layers += [(path, "ro") for path in policy.read_only]  # deeper than their folder: later
    layers += [(path, "ro") for path in policy.readable]
    layers += [(path, "rw") for path in policy.writable if path != "/"]
    layers.sort(key=lambda layer: (_depth(layer[0]), _ORDER[layer[1]]))
    for path, kind in layers:
        argv += _mount(path, kind)
    for path in policy.hidden:
        argv += ["--tmpfs", path, "--remount-ro", path]
    if "TMPDIR" in env:
        argv += ["--setenv", "TMPDIR", "/tmp"]  # the command's own TMPDIR may be read-only now
    argv += ["--chdir", workdir, *isolation_flags(network=policy.network), "--", *command]
    return argv


def _base(policy: SandboxPolicy) -> list[str]:
    root = "--bind" if "/" in policy.writable else "--ro-bind"
    return [root, "/", "/", "--dev", "/dev", "--proc", "/proc"]


def _mount(path: str, kind: _Kind) -> list[str]:
    if kind == "tmpfs":
        return ["--tmpfs", path]
    if kind == "ro":
        return ["--ro-bind", path, path]
    return ["--bind", path, path]


def _depth(path: str) -> int:
    return len([part for part in path.split("/") if part])
