"""``prctl(2)`` through ctypes, looked up once; None where there is none (not Linux).

Looked up in the parent: a child between ``fork`` and ``exec`` only calls it.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable
from typing import Final

__all__ = [
    "PR_CAPBSET_DROP",
    "PR_GET_DUMPABLE",
    "PR_SET_CHILD_SUBREAPER",
    "PR_SET_DUMPABLE",
    "PR_SET_PDEATHSIG",
    "prctl_function",
]

PR_SET_PDEATHSIG: Final = 1
PR_GET_DUMPABLE: Final = 3
PR_SET_DUMPABLE: Final = 4
PR_CAPBSET_DROP: Final = 24
PR_SET_CHILD_SUBREAPER: Final = 36


@functools.cache
def prctl_function() -> Callable[..., int] | None:
    """libc's ``prctl`` (five ``unsigned long`` arguments), or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
    function.restype = ctypes.c_int
    prctl: Callable[..., int] = function
    return prctl
