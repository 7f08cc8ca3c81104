"""Fixtures the unit tests share: a workspace folder and a folder beside it, outside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace: ``<tmp>/ws``, realpath-ed (tools compare realpaths)."""
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(ws: Path) -> Path:
    """``<tmp>/outside``, beside the workspace, holding ``secret.txt`` (``TOP-SECRET-CONTENT``)."""
    folder = ws.parent / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("TOP-SECRET-CONTENT\n")
    return folder
