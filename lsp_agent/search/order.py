"""How found paths are ordered: newest first, as the model most likely wants them."""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = ["newest_first"]


def newest_first(paths: Sequence[str]) -> list[str]:
    """``paths`` by modification time, newest first, then by path (blocking: use a thread)."""

    def key(path: str) -> tuple[float, str]:
        try:
            return (-os.stat(path).st_mtime, path)
        except OSError:
            return (0.0, path)

    return sorted(paths, key=key)
