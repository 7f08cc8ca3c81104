"""The disk beside an editor buffer: when it holds the buffer's text, and the buffer's text
written back in the file's own form."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.workspace.disk_copy import compare_disk, write_disk_form


@pytest.mark.parametrize(
    ("disk", "buffer"),
    [
        (b"a = 1\n", "a = 1\n"),
        (b"\xef\xbb\xbfa = 1\n", "a = 1\n"),  # the editor keeps the BOM out of its buffer
        (b"\xef\xbb\xbfa = 1\n", "\ufeffa = 1\n"),  # or in it
        (b"a = 1\r\nb = 2\r\n", "a = 1\r\nb = 2\r\n"),
        (b"a = 1\r\nb = 2\r\n", "a = 1\nb = 2\n"),  # Emacs holds a CRLF file with LF
    ],
)
def test_a_buffer_that_is_the_file_agrees(tmp_path: Path, disk: bytes, buffer: str) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(disk)
    assert compare_disk(str(path), buffer).agrees


@pytest.mark.parametrize(
    ("disk", "buffer"),
    [
        (b"a = 1\n", "a = 1\nmine = 2\n"),  # the user's unsaved line
        (b"a = 1\n", "a = 1"),  # even a final newline
        (b"a = 1\nb = 2\r\n", "a = 1\nb = 2\n"),  # a mixed file is not "the same"
        (b"\x00\x01binary", ""),
    ],
)
def test_a_buffer_with_other_text_does_not(tmp_path: Path, disk: bytes, buffer: str) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(disk)
    assert not compare_disk(str(path), buffer).agrees


def test_a_missing_file_agrees_only_with_an_empty_buffer(tmp_path: Path) -> None:
    missing = str(tmp_path / "new.py")
    assert compare_disk(missing, "").agrees
    assert not compare_disk(missing, "draft\n").agrees
    assert not compare_disk(missing, "draft\n").exists


@pytest.mark.parametrize(
    ("disk", "before", "after", "written"),
    [
        (b"a = 1\n", "a = 1\n", "a = 2\n", b"a = 2\n"),
        (b"\xef\xbb\xbfa = 1\n", "a = 1\n", "a = 2\n", b"\xef\xbb\xbfa = 2\n"),
        (b"a = 1\r\n", "a = 1\n", "a = 2\nb = 3\n", b"a = 2\r\nb = 3\r\n"),
        (b"a = 1\r\n", "a = 1\r\n", "a = 2\r\n", b"a = 2\r\n"),
    ],
)
def test_the_new_text_is_written_in_the_files_form(
    tmp_path: Path, disk: bytes, before: str, after: str, written: bytes
) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(disk)
    path.chmod(0o640)
    write_disk_form(str(path), after, compare_disk(str(path), before))
    assert path.read_bytes() == written
    assert path.stat().st_mode & 0o777 == 0o640
