"""How asyncio learns that a child process exited: through a pidfd, not a thread per child.

Python 3.11's default (``ThreadedChildWatcher``) starts a thread for every subprocess; a step
that records a checkpoint runs about eight git processes, and each thread start cost ~1–2 ms
of the step. ``PidfdChildWatcher`` waits on a pidfd in the event loop instead (Linux ≥ 5.3;
Python 3.12 picks it by itself). Installed once, by the command line's entry point, before
any event loop starts: loops made in the main thread afterwards are attached to it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import warnings


def use_pidfd_child_watcher() -> bool:
    """Install ``PidfdChildWatcher`` where it helps and works; True when installed."""
    if sys.version_info >= (3, 12) or not sys.platform.startswith("linux"):
        return False  # 3.12 uses pidfds already; the watcher API is deprecated there
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False  # an old kernel, or a sandbox that forbids pidfd_open: keep the default
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        asyncio.set_child_watcher(asyncio.PidfdChildWatcher())
    return True
