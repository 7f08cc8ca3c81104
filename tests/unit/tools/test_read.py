"""The read tool against real files in a temporary workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.core.tool_details import ReadDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.read import MAX_OUTPUT_BYTES, ReadParams, ReadTool


async def read(
    ws: Path,
    file_path: str,
    *,
    offset: int | None = None,
    limit: int | None = None,
    editor: RecordingEditor | None = None,
    extra_roots: tuple[str, ...] = (),
) -> ToolOutcome:
    ctx = tool_context(ws, editor=editor, extra_roots=extra_roots)
    params = ReadParams(file_path=file_path, offset=offset, limit=limit)
    return await ReadTool().run(params, ctx)


def write_lines(path: Path, count: int, width: int = 0) -> None:
    path.write_text("".join(f"line{n}".ljust(width, "x") + "\n" for n in range(1, count + 1)))


async def test_lines_are_numbered_and_the_footer_gives_the_total(ws: Path) -> None:
    (ws / "a.py").write_text("import os\n\nprint(os.sep)\n")

    outcome = await read(ws, "a.py")

    assert not outcome.is_error
    assert outcome.output == (
        "1: import os\n2: \n3: print(os.sep)\n\n(End of file - total 3 lines)"
    )
    assert outcome.title == "a.py"
    assert outcome.details == ReadDetails(
        path=str(ws / "a.py"),
        unit="lines",
        first=1,
        last=3,
        total=3,
        truncated=False,
        source="disk",
    )


async def test_a_last_line_without_newline_and_crlf_endings(ws: Path) -> None:
    (ws / "a.txt").write_bytes(b"one\r\ntwo\r\nthree")

    outcome = await read(ws, "a.txt")

    assert outcome.output == "1: one\n2: two\n3: three\n\n(End of file - total 3 lines)"


async def test_offset_and_limit_select_a_page_and_say_how_to_continue(ws: Path) -> None:
    write_lines(ws / "ten.txt", 10)

    outcome = await read(ws, "ten.txt", offset=3, limit=2)

    assert outcome.output == (
        "3: line3\n4: line4\n\n(Showing lines 3-4 of 10. Use offset=5 to continue.)"
    )
    assert (outcome.details.unit, outcome.details.first, outcome.details.last) == ("lines", 3, 4)
    assert outcome.details.total == 10
    assert outcome.details.truncated is True


async def test_a_page_that_reaches_the_end_is_not_truncated(ws: Path) -> None:
    write_lines(ws / "ten.txt", 10)

    outcome = await read(ws, "ten.txt", offset=9, limit=2)

    assert outcome.output == "9: line9\n10: line10\n\n(End of file - total 10 lines)"
    assert outcome.details.truncated is False


async def test_the_default_limit_is_2000_lines(ws: Path) -> None:
    write_lines(ws / "big.txt", 2500)

    outcome = await read(ws, "big.txt")

    body, footer = outcome.output.split("\n\n")
    assert body.splitlines()[-1] == "2000: line2000"
    assert footer == "(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)"


async def test_long_lines_are_cut_at_2000_chars(ws: Path) -> None:
    (ws / "min.js").write_text("x" * 5000 + "\nshort\n" + "é" * 3000 + "\n")

    outcome = await read(ws, "min.js")

    lines = outcome.output.split("\n")
    assert lines[0] == "1: " + "x" * 2000 + "... (line truncated to 2000 chars)"
    assert lines[1] == "2: short"
    assert lines[2] == "3: " + "é" * 2000 + "... (line truncated to 2000 chars)"
    assert outcome.details.total == 3


async def test_a_huge_single_line_is_cut_without_reading_it_whole(ws: Path) -> None:
    (ws / "one.txt").write_bytes(b"y" * (3 * 1024 * 1024) + b"\nnext")

    outcome = await read(ws, "one.txt")

    assert outcome.output == (
        "1: "
        + "y" * 2000
        + "... (line truncated to 2000 chars)\n2: next\n\n(End of file - total 2 lines)"
    )


async def test_output_is_capped_at_50_kb_with_a_hint(ws: Path) -> None:
    write_lines(ws / "wide.txt", 1000, width=100)

    outcome = await read(ws, "wide.txt")

    body, footer = outcome.output.split("\n\n")
    last = len(body.splitlines())
    assert 0 < last < 1000
    assert len(body.encode()) <= MAX_OUTPUT_BYTES
    assert footer == (
        f"(Output capped at 50 KB. Showing lines 1-{last}. Use offset={last + 1} to continue.)"
    )
    assert outcome.details == ReadDetails(
        path=str(ws / "wide.txt"),
        unit="lines",
        first=1,
        last=last,
        total=1000,
        truncated=True,
        source="disk",
    )


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("nul.txt", b"hello\x00world\n"),
        ("archive.zip", b"just text, but a binary extension\n"),
        ("noise.txt", bytes([1, 2, 3, 4, 5, 6, 7, 8, 65]) * 100),
    ],
)
async def test_binary_files_are_refused(ws: Path, name: str, content: bytes) -> None:
    (ws / name).write_bytes(content)

    outcome = await read(ws, name)

    assert outcome.is_error
    assert outcome.output == f"Cannot read binary file: {ws / name}"


async def test_invalid_utf8_is_replaced_not_refused(ws: Path) -> None:
    (ws / "latin1.txt").write_bytes(b"caf\xe9\n")

    outcome = await read(ws, "latin1.txt")

    assert not outcome.is_error
    assert outcome.output.startswith("1: caf\ufffd\n")


async def test_an_empty_file_reads_at_offset_1_only(ws: Path) -> None:
    (ws / "empty.txt").write_text("")

    first = await read(ws, "empty.txt")
    second = await read(ws, "empty.txt", offset=2)

    assert not first.is_error
    assert first.output == "(End of file - total 0 lines)"
    assert second.is_error
    assert second.output == "Offset 2 is out of range for this file (0 lines)"


async def test_an_offset_past_the_end_is_an_error(ws: Path) -> None:
    write_lines(ws / "three.txt", 3)

    outcome = await read(ws, "three.txt", offset=5)

    assert outcome.is_error
    assert outcome.output == "Offset 5 is out of range for this file (3 lines)"


async def test_a_missing_file_suggests_up_to_three_similar_siblings(ws: Path) -> None:
    for name in ("notes.md", "Notes.txt", "old_notes.txt", "notes-2.txt", "unrelated.txt"):
        (ws / name).write_text("x")

    outcome = await read(ws, "notes")

    assert outcome.is_error
    lines = outcome.output.splitlines()
    assert lines[0] == f"File not found: {ws / 'notes'}"
    assert lines[2] == "Did you mean one of these?"
    suggestions = lines[3:]
    assert len(suggestions) == 3
    assert all("notes" in os.path.basename(s).lower() for s in suggestions)
    assert str(ws / "unrelated.txt") not in outcome.output


async def test_a_missing_file_suggests_names_contained_in_it(ws: Path) -> None:
    (ws / "main.py").write_text("x")

    outcome = await read(ws, "MAIN.py.bak")

    assert outcome.output == (
        f"File not found: {ws / 'MAIN.py.bak'}\n\nDid you mean one of these?\n{ws / 'main.py'}"
    )


async def test_a_missing_file_in_a_missing_folder_has_no_suggestions(ws: Path) -> None:
    outcome = await read(ws, "nope/file.txt")

    assert outcome.is_error
    assert outcome.output == f"File not found: {ws / 'nope' / 'file.txt'}"


async def test_a_directory_is_listed_sorted_without_links_leaving_the_workspace(
    ws: Path, outside: Path
) -> None:
    (ws / "src").mkdir()
    (ws / "b.txt").write_text("b")
    (ws / "A.md").write_text("a")
    (ws / "src-link").symlink_to(ws / "src", target_is_directory=True)
    (ws / "escape").symlink_to(outside, target_is_directory=True)
    (ws / "secret-link.txt").symlink_to(outside / "secret.txt")

    outcome = await read(ws, ".")

    assert not outcome.is_error
    assert outcome.output == "A.md\nb.txt\nsrc/\nsrc-link/\n\n(4 entries)"
    assert outcome.title == "."
    assert (outcome.details.unit, outcome.details.first, outcome.details.last) == ("entries", 1, 4)


async def test_a_directory_listing_pages_with_offset_and_limit(ws: Path) -> None:
    for n in range(1, 6):
        (ws / f"f{n}.txt").write_text("x")

    outcome = await read(ws, ".", offset=2, limit=2)

    assert outcome.output == (
        "f2.txt\nf3.txt\n\n(Showing entries 2-3 of 5. Use offset=4 to continue.)"
    )


async def test_outside_paths_are_refused_and_never_read(ws: Path, outside: Path) -> None:
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    editor = RecordingEditor()

    for path in (str(outside / "secret.txt"), "../outside/secret.txt", "link.txt"):
        outcome = await read(ws, path, editor=editor)

        assert outcome.is_error
        assert "outside the workspace" in outcome.output
        assert str(ws) in outcome.output
        assert "external_directory" in outcome.output
        assert "TOP-SECRET-CONTENT" not in outcome.output
    assert editor.opened == []


async def test_an_open_editor_buffer_wins_over_the_disk(ws: Path) -> None:
    (ws / "a.py").write_text("on disk\n")
    (ws / "alias.py").symlink_to(ws / "a.py")
    editor = RecordingEditor(buffers={str(ws / "a.py"): "unsaved\nchanges"})

    outcome = await read(ws, "alias.py", editor=editor)

    assert outcome.output == (
        "1: unsaved\n2: changes\n\n(End of file - total 2 lines)\n\n"
        "Note: this is the editor's buffer, which has unsaved changes; the file on disk "
        "differs, and commands, tests, searches and git see the disk's version."
    )
    assert outcome.details.source == "editor"
    assert editor.opened == [str(ws / "a.py")]


async def test_a_buffer_that_is_the_file_on_disk_gets_no_note(ws: Path) -> None:
    (ws / "a.py").write_bytes(b"\xef\xbb\xbfsame\r\ntext\r\n")
    # an editor that keeps the BOM out of its buffer and holds LF line ends (Emacs)
    editor = RecordingEditor(buffers={str(ws / "a.py"): "same\ntext\n"})

    outcome = await read(ws, "a.py", editor=editor)

    assert outcome.output == "1: same\n2: text\n\n(End of file - total 2 lines)"
    assert outcome.details.source == "editor"


async def test_an_unsaved_new_buffer_is_readable(ws: Path) -> None:
    editor = RecordingEditor(buffers={str(ws / "new.py"): "draft\n"})

    outcome = await read(ws, "new.py", offset=1, limit=5, editor=editor)

    assert outcome.output.startswith("1: draft\n\n(End of file - total 1 lines)\n\n")
    assert "the file on disk does not exist yet" in outcome.output


async def test_an_editor_buffer_pages_like_a_file(ws: Path) -> None:
    text = "".join(f"b{n}\n" for n in range(1, 11))
    (ws / "buf.txt").write_text(text)
    editor = RecordingEditor(buffers={str(ws / "buf.txt"): text})

    outcome = await read(ws, "buf.txt", offset=4, limit=3, editor=editor)

    assert outcome.output == (
        "4: b4\n5: b5\n6: b6\n\n(Showing lines 4-6 of 10. Use offset=7 to continue.)"
    )


async def test_a_fifo_is_refused_rather_than_waited_on(ws: Path) -> None:
    os.mkfifo(ws / "pipe")

    outcome = await read(ws, "pipe")

    assert outcome.is_error
    assert outcome.output == f"Not a regular file: {ws / 'pipe'}"


async def test_the_title_is_the_workspace_relative_path(ws: Path) -> None:
    (ws / "pkg").mkdir()
    (ws / "pkg" / "mod.py").write_text("x = 1\n")

    outcome = await read(ws, str(ws / "pkg" / "mod.py"))

    assert outcome.title == os.path.join("pkg", "mod.py")


async def test_extra_roots_are_readable_and_only_they(ws: Path, outside: Path) -> None:
    spill = ws.parent / "spill" / "ses_1"
    spill.mkdir(parents=True)
    write_lines(spill / "call_1.txt", 10)

    inside = await read(ws, str(spill / "call_1.txt"), offset=4, limit=2, extra_roots=(str(spill),))
    sibling = await read(ws, str(outside / "secret.txt"), extra_roots=(str(spill),))
    without = await read(ws, str(spill / "call_1.txt"))

    assert inside.output == (
        "4: line4\n5: line5\n\n(Showing lines 4-5 of 10. Use offset=6 to continue.)"
    )
    assert inside.title == str(spill / "call_1.txt")
    assert sibling.is_error
    assert "outside the workspace" in sibling.output
    assert without.is_error
    assert "outside the workspace" in without.output
