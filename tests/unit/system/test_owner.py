"""An owner named across pid reuse (lsp_agent.system.owner)."""

from __future__ import annotations

import os
import subprocess

import pytest

from lsp_agent.system.owner import current_owner, owner_alive


def test_this_process_is_alive_and_an_impostor_with_its_pid_is_not() -> None:
    me = current_owner()
    assert me["pid"] == os.getpid()
    assert isinstance(me["startTicks"], int)
    assert owner_alive(me)
    assert not owner_alive({**me, "startTicks": me["startTicks"] + 1})


def test_an_ended_process_is_not_alive() -> None:
    child = subprocess.Popen(["true"])
    child.wait()
    assert not owner_alive({"pid": child.pid, "startTicks": 1})


@pytest.mark.parametrize("owner", [{}, {"pid": 0}, {"pid": "12"}, {"pid": -1}])
def test_no_usable_pid_is_not_alive(owner: dict[str, object]) -> None:
    assert not owner_alive(owner)
