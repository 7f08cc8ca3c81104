"""Files only their owner may read: the data folder ``0700``, what is in it ``0600``.

Transcripts, tool outputs and the database hold everything a session saw, so no other local
user may read them, whatever the umask. Folders are created private, and looser modes found
later (an older version, a permissive umask) are tightened.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Final

__all__ = ["PRIVATE_FILE_MODE", "PRIVATE_FOLDER_MODE", "private_folder", "tighten"]

PRIVATE_FOLDER_MODE: Final = 0o700
PRIVATE_FILE_MODE: Final = 0o600

_log = logging.getLogger(__name__)


def private_folder(folder: Path) -> None:
    """``folder`` (and missing parents) created, and itself made ``0700``."""
    folder.mkdir(mode=PRIVATE_FOLDER_MODE, parents=True, exist_ok=True)
    tighten(folder, PRIVATE_FOLDER_MODE)


def tighten(path: Path | str, allowed: int) -> None:
    """Drop the permission bits of ``path`` outside ``allowed`` (only on our own files; a
    missing file, or one the system will not change, is left as it is)."""
    try:
        info = os.stat(path)
        mode = info.st_mode & 0o7777
        if mode & ~allowed and info.st_uid == os.geteuid():
            os.chmod(path, mode & allowed)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as error:
        _log.warning("could not make %s private: %s", path, error)
