"""A keyring backend in a JSON file, for tests of ``lsp-agent auth`` and keyring keys.

Selected in a child process with ``PYTHON_KEYRING_BACKEND=lsp_agent.testing.file_keyring.
FileKeyring``; the file is ``$LSP_AGENT_TEST_KEYRING``. Plain text on purpose: never use it
for real keys.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

__all__ = ["BACKEND", "FILE_ENV", "FileKeyring"]

FILE_ENV = "LSP_AGENT_TEST_KEYRING"
BACKEND = "lsp_agent.testing.file_keyring.FileKeyring"


class FileKeyring(KeyringBackend):
    priority = -10  # below the fail backend: never chosen by detection, only by name

    def _path(self) -> Path:
        return Path(os.environ[FILE_ENV])

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data: dict[str, dict[str, str]] = json.loads(self._path().read_text())
        except FileNotFoundError:
            return {}
        return data

    def _save(self, data: dict[str, dict[str, str]]) -> None:
        self._path().write_text(json.dumps(data))

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(service, {}).get(username)

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data.setdefault(service, {})[username] = password
        self._save(data)

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        if username not in data.get(service, {}):
            raise PasswordDeleteError(username)
        del data[service][username]
        self._save(data)
