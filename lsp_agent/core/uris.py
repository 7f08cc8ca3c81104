"""``file:`` uris and local paths: how a session records its folder, and how editors name files."""

from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse


def file_uri(path: str) -> str:
    """The ``file:`` uri of an absolute path."""
    return PurePosixPath(path).as_uri()


def path_of_uri(uri: str) -> str | None:
    """The local path of a ``file:`` uri; None for any other scheme or a remote host."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return unquote(parsed.path)


def local_path(uri: str) -> str:
    """The local path of a ``file:`` uri; any other uri as it is (a session's folder)."""
    return path_of_uri(uri) or uri
