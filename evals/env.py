"""The environment of one task's agent: its own HOME, config and data folders, the provider
variables passed through, and the task's permission rules in its user config file."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PASSED = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "TERM",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)
"""What a task's agent sees of the caller's environment (plus ``--env`` names)."""


def agent_env(
    home: Path,
    *,
    config: Mapping[str, Any],
    passed: tuple[str, ...] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``home`` as HOME and XDG folders, ``config`` as its user config file."""
    env = {k: v for k, v in os.environ.items() if k in PASSED or k in passed}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        LSP_AGENT_DATA_DIR=str(home / "lsp-agent-data"),
        LSP_AGENT_NO_DAEMON="1",  # a warm process would outlive the task's temporary home
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="evals",
        GIT_AUTHOR_EMAIL="evals@example.invalid",
        GIT_COMMITTER_NAME="evals",
        GIT_COMMITTER_EMAIL="evals@example.invalid",
    )
    env.update(extra or {})
    folder = home / ".config" / "lsp-agent"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(dict(config), indent=1))
    return env


def merged_config(base: Mapping[str, Any], task: Mapping[str, Any]) -> dict[str, Any]:
    """The user's ``--config`` with the task's keys over it (objects merged key by key), so
    a task's permission rules win."""
    out = dict(base)
    for key, value in task.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged_config(out[key], value)
        else:
            out[key] = value
    return out
