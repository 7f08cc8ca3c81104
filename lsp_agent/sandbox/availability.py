"""Whether bubblewrap can sandbox commands here, and if not, why not — in words a user can act on.

The answer comes from trying: ``bwrap`` is found, then run once with the very namespaces a
command gets (``/bin/sh -c :`` inside). It fails where unprivileged user namespaces are off
(``kernel.unprivileged_userns_clone``, AppArmor's ``restrict_unprivileged_userns``) or in a
container without ``CAP_SYS_ADMIN``; its own message is kept. ``LSP_AGENT_BWRAP`` names the
program to use instead of ``bwrap`` on ``PATH``. Either is taken only from outside the folders
to avoid (the workspace folders: a command could plant a ``bwrap`` there), through
:func:`lsp_agent.system.programs.find_program`, and the probe runs with an environment of
just ``PATH`` (its trusted entries) and ``LC_ALL``: no key of ours reaches it.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from lsp_agent.sandbox.bwrap import isolation_flags
from lsp_agent.system.programs import find_program, probe, trusted_search_path

__all__ = ["BWRAP_ENV", "Availability", "availability", "check_availability"]

BWRAP_ENV: Final = "LSP_AGENT_BWRAP"
_PROBE_SECONDS: Final = 10.0
_INSTALL_HINT: Final = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"


@attrs.frozen(kw_only=True)
class Availability:
    works: bool
    reason: str
    """What runs (``bubblewrap 0.8.0 (/usr/bin/bwrap)``), or why nothing can."""
    bwrap: str | None = None
    """The program, when it works."""
    sizes: bool = False
    """It takes ``--size`` for a tmpfs (bubblewrap 0.6 and later), so the sandbox's
    in-memory folders can be bounded."""


def check_availability(env: Mapping[str, str], avoid: Sequence[str]) -> Availability:
    """Try bubblewrap now (a subprocess, up to 10 s); ``avoid``: folders it must not be
    taken from (required: a caller that forgot the workspace would run a planted ``bwrap``)."""
    if sys.platform == "darwin":
        return Availability(
            works=False,
            reason="off on macOS: bubblewrap is Linux-only, so commands run unconfined",
        )
    if not sys.platform.startswith("linux"):
        return Availability(works=False, reason=f"off on {sys.platform}: bubblewrap needs Linux")
    named = env.get(BWRAP_ENV, "").strip()
    path = env.get("PATH", os.defpath)
    program = find_program(named or "bwrap", path=path, avoid=avoid)
    if program is None:
        where = f"{named} ({BWRAP_ENV}) was not found" if named else "bwrap is not installed"
        return Availability(
            works=False, reason=f"{where} outside the workspace folders: {_INSTALL_HINT}"
        )
    probe_env = {"PATH": os.pathsep.join(trusted_search_path(path, avoid)), "LC_ALL": "C"}
    argv = [program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += [*isolation_flags(network=False), "--", "/bin/sh", "-c", ":"]
    done = probe(argv, probe_env, timeout=_PROBE_SECONDS)
    if isinstance(done, Exception):
        return Availability(works=False, reason=f"{program} does not run: {done}")
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return Availability(
            works=False,
            reason=f"{program} cannot create its namespaces here ({message}); unprivileged "
            "user namespaces may be disabled, or this is a container without CAP_SYS_ADMIN",
        )
    version = _version(program, probe_env)
    return Availability(
        works=True,
        reason=f"{version} ({program})",
        bwrap=program,
        sizes="--size" in _help(program, probe_env),
    )


@functools.cache
def _cached(bwrap: str, path: str, avoid: tuple[str, ...]) -> Availability:
    return check_availability({BWRAP_ENV: bwrap, "PATH": path}, avoid)


def availability(env: Mapping[str, str] | None, avoid: Sequence[str]) -> Availability:
    """:func:`check_availability`, tried once per process for a given program, PATH and
    folders to avoid."""
    source = os.environ if env is None else env
    folders = tuple(sorted(set(avoid)))
    return _cached(source.get(BWRAP_ENV, ""), source.get("PATH", os.defpath), folders)


def _help(program: str, env: Mapping[str, str]) -> str:
    done = probe([program, "--help"], env, timeout=5)
    return "" if isinstance(done, Exception) else done.stdout + done.stderr


def _version(program: str, env: Mapping[str, str]) -> str:
    done = probe([program, "--version"], env, timeout=5)
    return ("" if isinstance(done, Exception) else done.stdout.strip()) or "bubblewrap"
