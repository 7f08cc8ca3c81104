"""One configuration key read before the settings are loaded: the language server decides what
it advertises in its ``initialize`` answer (``completion.enabled``) without the ~70 ms the
validated settings cost there. The same layers as ``load.py``, unvalidated; the loaded
settings still decide what the server does once it is up."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lsp_agent.config.locations import extra_config_file, project_config_file, user_config_file


def peek_key(
    key: Sequence[str],
    *,
    workspace: Path | None,
    env: Mapping[str, str],
    workspace_options: Mapping[str, Any] | None = None,
    init_options: Mapping[str, Any] | None = None,
) -> object | None:
    """The value the last layer that sets ``key`` gives it (None: no layer does). A file
    that cannot be read or parsed counts as not setting it."""
    layers: list[Mapping[str, Any] | None] = [_read(user_config_file(env))]
    if workspace is not None:
        layers.append(_read(project_config_file(workspace)))
    layers.append(workspace_options)
    extra = extra_config_file(workspace or Path.cwd(), env)
    if extra is not None:
        layers.append(_read(extra))
    layers.append(init_options)
    found: object | None = None
    for layer in layers:
        value = _lookup(layer, key)
        if value is not None:
            found = value
    return found


def _read(path: Path) -> Mapping[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _lookup(layer: Mapping[str, Any] | None, key: Sequence[str]) -> object | None:
    value: object = layer
    for part in key:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value
