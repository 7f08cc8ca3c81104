"""``/proc/<pid>/stat`` parsed once (lsp_agent.system.procfs), whatever the command name holds."""

from __future__ import annotations

import os
import subprocess

import pytest

from lsp_agent.system import procfs
from lsp_agent.system.procfs import ProcStat, parse_stat

# Fields 3..22 of a real stat line, after the name: state, ppid, pgrp, then 16 more, then
# the start time (field 22).
_TAIL = b"S 41 40 40 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 10000 200"


@pytest.mark.parametrize(
    "name",
    [b"sleep", b"a b c", b"x) S 1 2 3 (y", b"((", b")", b"tab\there", b""],
)
def test_the_fields_after_any_command_name(name: bytes) -> None:
    line = b"1234 (" + name + b") " + _TAIL + b"\n"
    assert parse_stat(line) == ProcStat(state="S", ppid=41, pgid=40, start_ticks=987654)


@pytest.mark.parametrize("data", [b"", b"1234 (cut", b"1234 (x) S 41 40", b"1 (x) S a b"])
def test_not_a_stat_line_is_none(data: bytes) -> None:
    assert parse_stat(data) is None


def test_a_live_process_with_parentheses_and_spaces_in_its_name() -> None:
    child = subprocess.Popen(
        ["bash", "-c", "exec -a 'odd (name) here' sleep 30"],
        start_new_session=True,
    )
    try:
        stat = procfs.read_stat(child.pid)
        assert stat is not None
        assert stat.ppid == os.getpid()
        assert stat.pgid == child.pid  # its own session, so its own group
        assert stat.start_ticks > 0
        assert procfs.start_ticks(child.pid) == stat.start_ticks
        assert child.pid in procfs.pids()
    finally:
        child.kill()
        child.wait()
    assert procfs.read_stat(child.pid) is None
    assert procfs.start_ticks(child.pid) is None
