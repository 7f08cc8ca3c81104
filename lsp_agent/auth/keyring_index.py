"""Which providers have a key in the keyring, so that a start needs no keyring probe to know.

``lsp-agent auth set`` and ``auth remove`` keep ``<data folder>/keyring-providers.json``: the
providers' names, never a key. At start the agent reads the keyring only for the providers
listed there whose variable is unset (their keys are masked before anything reaches the
model); with none listed it does not even import ``keyring``, whose first use costs a tenth
of a second or more. A data folder without the list (keys stored by an earlier version) is
probed once for every provider, as before, and the list is written from what was found.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from pathlib import Path

from lsp_agent.system.atomic import write_atomic
from lsp_agent.system.private_files import PRIVATE_FILE_MODE

__all__ = ["FILE_NAME", "KeyringIndex"]

FILE_NAME = "keyring-providers.json"


class KeyringIndex:
    """The list at ``path``; every method is a value or a no-op on an OS error (the list only
    saves work: without it the keyring is probed)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> frozenset[str] | None:
        """The listed providers; ``None`` when there is no readable list (probe them all)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        names = data.get("providers") if isinstance(data, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return None
        return frozenset(names)

    def write(self, names: Iterable[str]) -> None:
        body = json.dumps({"providers": sorted(set(names))}) + "\n"
        with contextlib.suppress(OSError):
            write_atomic(self.path, body.encode(), mode=PRIVATE_FILE_MODE)

    def add(self, name: str) -> None:
        """``auth set``: listed from now on (no list yet: the next start probes them all)."""
        listed = self.read()
        if listed is not None and name not in listed:
            self.write(listed | {name})

    def remove(self, name: str) -> None:
        listed = self.read()
        if listed is not None and name in listed:
            self.write(listed - {name})
