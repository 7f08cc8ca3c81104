"""Where the configuration files are: the user file, the project file, the file
``LSP_AGENT_CONFIG`` names. No validation library: the language server reads a key or two
from these before it answers ``initialize`` (``config/peek.py``); ``load.py`` reads them all."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

APP_NAME: Final = "lsp-agent"
PROJECT_FILE_NAME: Final = ".lsp-agent.json"
CONFIG_ENV: Final = "LSP_AGENT_CONFIG"


def home_of(env: Mapping[str, str]) -> str:
    home = env.get("HOME") or (env.get("USERPROFILE") if sys.platform == "win32" else None)
    return home or str(Path.home())


def user_config_file(env: Mapping[str, str]) -> Path:
    """``<platform config dir>/lsp-agent/config.json``.

    On Linux and the BSDs this is platformdirs' XDG rule, computed from ``env``:
    ``$XDG_CONFIG_HOME/lsp-agent`` when set and not blank, else ``$HOME/.config/lsp-agent``.
    Elsewhere ``platformdirs.user_config_dir`` (macOS: ``~/Library/Application Support``,
    Windows: ``%LOCALAPPDATA%``).
    """
    if sys.platform in ("win32", "darwin"):
        return Path(_platform_config_dir()) / "config.json"
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg.strip() else Path(home_of(env)) / ".config"
    return base / APP_NAME / "config.json"


def project_config_file(workspace: Path) -> Path:
    return workspace / PROJECT_FILE_NAME


def extra_config_file(workspace: Path, env: Mapping[str, str]) -> Path | None:
    """The file named by ``LSP_AGENT_CONFIG`` (``~`` expanded, relative to the workspace)."""
    value = env.get(CONFIG_ENV, "").strip()
    if not value:
        return None
    path = Path(expand_home(value, home_of(env)))
    return path if path.is_absolute() else workspace / path


def expand_home(text: str, home: str) -> str:
    if text == "~" or text == "$HOME":
        return home
    for prefix in ("~/", "$HOME/", "~\\"):
        if text.startswith(prefix):
            return os.path.join(home, text[len(prefix) :])
    return text


def _platform_config_dir() -> str:
    import platformdirs  # macOS and Windows only

    return platformdirs.user_config_dir(APP_NAME, appauthor=False)
