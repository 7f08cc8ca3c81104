"""Path arguments in the shapes models get wrong, read the way they were meant.

Models often write a path as the editor's explorer shows it, with the workspace folder's own
name in front (``project/src/a.py`` for ``src/a.py`` in ``/home/u/project``), as a
``file://`` URI, or as the ``path:line`` they cite code with (``src/a.py:12``). Each is
rewritten only when that is unambiguous: the path as written names nothing, exactly one
workspace folder has that name, and the rewritten path exists. The
result still goes through the boundary (``WorkspaceBoundary.resolve``) like any path: this
only chooses which path is meant, never whether it may be touched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from urllib.parse import unquote, urlsplit

__all__ = ["meant_path"]


_LINE_SUFFIX = re.compile(r":\d+(?::\d+)?$")


def meant_path(path: str, roots: Sequence[str]) -> str:
    """``path`` as the model meant it, relative paths judged against ``roots[0]``."""
    if path.startswith("file://"):
        return _from_uri(path)
    suffix = _LINE_SUFFIX.search(path)
    if suffix is not None and roots and not _names(path, roots[0]):
        bare = meant_path(path[: suffix.start()], roots)
        if _names(bare, roots[0]):
            return bare
    if not roots or os.path.isabs(path):
        return path
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if not parts or os.path.lexists(os.path.join(roots[0], parts[0])):
        return path
    named = [root for root in roots if os.path.basename(root.rstrip("/")) == parts[0]]
    if len(named) != 1:
        return path
    meant = os.path.join(named[0], *parts[1:])
    return meant if os.path.lexists(meant) else path


def _names(path: str, root: str) -> bool:
    """Whether ``path`` (relative to ``root``, or absolute) names something."""
    return os.path.lexists(os.path.join(root, path))


def _from_uri(uri: str) -> str:
    """A ``file://`` URI's path (``file:///a/b%20c`` → ``/a/b c``); anything else as given."""
    parsed = urlsplit(uri)
    if parsed.netloc not in ("", "localhost") or not parsed.path.startswith("/"):
        return uri
    return unquote(parsed.path)
