"""The credential stores with their links followed are reused only while nothing on the way
to them changed: a link made later is followed, even where a coarse clock would hide it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from lsp_agent.system import credentials
from lsp_agent.system.credentials import real_credential_paths


def _age(*folders: Path) -> None:
    """An hour old, as a folder that did not change in a while."""
    old = time.time() - 3600
    for folder in folders:
        os.utime(folder, (old, old))


@pytest.mark.parametrize("link", [".aws", ".config"])
def test_a_link_made_after_the_stores_were_followed_is_followed_too(
    real_tmp: Path, link: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every folder trusted however recently it changed (/tmp above changes all the time)
    monkeypatch.setattr(credentials, "_RACY_NS", -(10**18))
    home = real_tmp / "user"
    (home / ".config").mkdir(parents=True)
    elsewhere = real_tmp / "elsewhere"
    elsewhere.mkdir()
    env = {"HOME": str(home)}
    _age(home / ".config", home)
    before = real_credential_paths(env)
    assert str(home / ".aws") in before
    assert str(home / ".config" / "gh") in before

    if (home / link).exists():
        (home / link).rmdir()
    (home / link).symlink_to(elsewhere)
    _age(home)  # as a coarse clock would show it: the folder's time did not move

    after = real_credential_paths(env)
    target = elsewhere if link == ".aws" else elsewhere / "gh"
    assert str(target) in after
    assert real_credential_paths(env) == after
