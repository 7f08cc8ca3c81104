"""A file replaced whole or not at all (lsp_agent.system.atomic)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lsp_agent.system.atomic import write_atomic, write_temp


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_and_its_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "file.txt"
    write_atomic(target, b"hello")
    assert target.read_bytes() == b"hello"
    assert _mode(target) == 0o600  # the default temporary file is private
    assert os.listdir(target.parent) == ["file.txt"]


def test_a_replaced_file_keeps_its_mode_unless_one_is_given(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_bytes(b"old")
    target.chmod(0o640)
    write_atomic(target, b"new")
    assert (target.read_bytes(), _mode(target)) == (b"new", 0o640)
    write_atomic(target, b"newer", mode=0o600)
    assert (target.read_bytes(), _mode(target)) == (b"newer", 0o600)


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "folder" / "file.txt"
    target.parent.mkdir()
    target.write_bytes(b"old")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert os.listdir(target.parent) == ["file.txt"]


def test_a_failed_rename_removes_the_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "folder" / "file.txt"
    target.parent.mkdir()
    target.write_bytes(b"old")

    def refuse(source: str, destination: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert os.listdir(target.parent) == ["file.txt"]


def test_the_temporary_file_comes_from_the_maker_given(tmp_path: Path) -> None:
    made: list[tuple[str, str]] = []

    def make(folder: str, name: str) -> tuple[str, int]:
        made.append((folder, name))
        path = os.path.join(folder, f".{name}.mine.tmp")
        return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)

    temp = write_temp(str(tmp_path / "file.txt"), b"data", make=make)
    assert made == [(str(tmp_path), "file.txt")]
    assert Path(temp).read_bytes() == b"data"
    assert Path(temp).name == ".file.txt.mine.tmp"
