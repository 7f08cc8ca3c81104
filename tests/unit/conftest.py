"""Fixtures the unit tests share: the real temporary folder, a workspace in it and a folder
beside it, outside; where a tool's spilled output goes; no system resolver."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.web import netguard


@pytest.fixture
def real_tmp(tmp_path: Path) -> Path:
    """tmp_path without symlinks in it (macOS /var), so expected paths compare equal."""
    return Path(os.path.realpath(tmp_path))


@pytest.fixture
def ws(real_tmp: Path) -> Path:
    """The workspace: ``<tmp>/ws``, realpath-ed (tools compare realpaths)."""
    root = real_tmp / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(ws: Path) -> Path:
    """``<tmp>/outside``, beside the workspace, holding ``secret.txt`` (``TOP-SECRET-CONTENT``)."""
    folder = ws.parent / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("TOP-SECRET-CONTENT\n")
    return folder


@pytest.fixture
def spill_root(real_tmp: Path) -> Path:
    """Where the tool registry spills long outputs: ``<tmp>/data/tool-output``."""
    return real_tmp / "data" / "tool-output"


@pytest.fixture
def no_system_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's resolver is never asked (it is not on loopback); a module that fetches
    uses it with ``pytestmark = pytest.mark.usefixtures("no_system_dns")``."""

    async def refuse(host: str, port: int) -> list[str]:
        raise AssertionError(f"the system resolver was asked for {host}:{port}")

    monkeypatch.setattr(netguard, "system_resolver", refuse)
