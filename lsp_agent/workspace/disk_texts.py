"""Files on disk as text, for the review's undo of a file that is not open in an editor
(the core's ``core.review.reviews.FileTexts`` port).

Reads keep what a rewrite must give back: bytes that are not UTF-8 as ``surrogateescape``
stand-ins and a BOM as a leading U+FEFF. Writes are atomic and journaled like the tools'
(``files.write_atomic``): the old bytes or the new ones, never a mix. Reads, writes and
removals reach the file without following a link (``system.beneath``): a folder the model
swapped for a symlink to ``$HOME`` makes the undo fail for that file, never act there.
"""

from __future__ import annotations

import asyncio
import contextlib

from lsp_agent.system import beneath
from lsp_agent.workspace.files import BOM, FileError, encode_text, load_text, write_atomic


class DiskTexts:
    async def read_text(self, path: str) -> str | None:
        """The file's text; None when it is missing, not a regular file, or binary."""
        try:
            found = await asyncio.to_thread(load_text, path)
        except FileError:
            return None
        if found is None:
            return None
        return BOM + found.text if found.bom else found.text

    async def write_text(self, path: str, text: str) -> None:
        try:
            data = encode_text(text, bom=text.startswith(BOM))
        except UnicodeEncodeError as error:
            raise OSError(f"the text cannot be written as UTF-8 ({error.reason})") from error
        await asyncio.to_thread(write_atomic, path, data)

    async def remove(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            await asyncio.to_thread(beneath.unlink, path)
