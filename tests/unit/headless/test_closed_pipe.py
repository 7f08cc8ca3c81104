"""A stream whose reader went away: the first failed write stops the run, later ones are
dropped, and nothing raises into the turn."""

from __future__ import annotations

import io
import os

from lsp_agent.closed_pipe import PipeGuard, silence_stdout


class Broken(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_the_first_broken_write_calls_back_once_and_later_writes_are_dropped() -> None:
    stream, stops = Broken(), []
    guard = PipeGuard(stream, lambda: stops.append(1))

    assert guard.write("one") == 3
    guard.flush()
    guard.write("two")

    assert stops == [1]
    assert stream.writes == 1
    assert guard.closed_by_reader


def test_a_working_stream_gets_every_write() -> None:
    stream = io.StringIO()
    guard = PipeGuard(stream, lambda: None)

    guard.write("a")
    guard.write("b\n")
    guard.flush()

    assert stream.getvalue() == "ab\n"
    assert not guard.closed_by_reader


def test_silence_stdout_points_the_descriptor_at_dev_null() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    stream = os.fdopen(write_end, "w")
    try:
        silence_stdout(stream)
        stream.write("nobody reads this\n")
        stream.flush()  # no BrokenPipeError: the descriptor is /dev/null now
        assert os.path.samefile(f"/proc/self/fd/{write_end}", os.devnull)
    finally:
        stream.close()
