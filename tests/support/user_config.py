"""The user config file of a test: ``$XDG_CONFIG_HOME/lsp-agent/config.json`` (tests/conftest.py
points XDG_CONFIG_HOME into the test's own folder; a server started later reads it)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_user_config(content: dict[str, Any]) -> Path:
    """Write ``content`` as the user config file, replacing what was there; its path."""
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_text(json.dumps(content))
    return path
