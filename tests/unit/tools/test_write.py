"""The write tool against real files, and the shared file helpers (``tools/files.py``)."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from lsp_agent.core.permission import ALLOWED, PermissionRequest, PermissionVerdict
from lsp_agent.core.tooling import AskPermission, ToolOutcome
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import RecordingAsk, allow_all, deny, workspace_only
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.files import (
    FileDiff,
    FileLocks,
    count_lines,
    detect_newline,
    unified_diff,
    write_atomic,
)
from lsp_agent.tools.write import WriteParams, WriteTool

BOM = b"\xef\xbb\xbf"


@pytest.fixture
def outside_keep(outside: Path) -> Path:
    """The shared ``outside`` folder; its ``secret.txt`` holds ``keep`` (asserted intact)."""
    (outside / "secret.txt").write_bytes(b"keep\n")
    return outside


async def write(
    ws: Path,
    file_path: str,
    content: str,
    *,
    ask: AskPermission = allow_all,
    editor: RecordingEditor | None = None,
    tool: WriteTool | None = None,
) -> ToolOutcome:
    ctx = tool_context(ws, ask=ask, editor=editor)
    params = WriteParams(file_path=file_path, content=content)
    return await (tool or WriteTool(FileLocks())).run(params, ctx)


# --- the tool ----------------------------------------------------------------------------


async def test_a_new_file_is_created_with_its_parent_folders(ws: Path) -> None:
    outcome = await write(ws, "pkg/sub/a.txt", "one\ntwo\n")

    assert not outcome.is_error
    assert (ws / "pkg" / "sub" / "a.txt").read_bytes() == b"one\ntwo\n"
    assert outcome.output == "Wrote pkg/sub/a.txt (2 lines).\nDiff: +2 -0 lines"
    assert outcome.title == "pkg/sub/a.txt"
    assert outcome.metadata == {
        "path": str(ws / "pkg" / "sub" / "a.txt"),
        "additions": 2,
        "deletions": 0,
        "patch": "--- /dev/null\n+++ pkg/sub/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n",
        "created": True,
    }


async def test_an_existing_file_is_replaced_whole(ws: Path) -> None:
    (ws / "a.txt").write_text("old one\nsame\n")

    outcome = await write(ws, "a.txt", "new one\nsame\nextra")

    assert (ws / "a.txt").read_text() == "new one\nsame\nextra"
    assert outcome.output == "Wrote a.txt (3 lines).\nDiff: +2 -1 lines"
    assert outcome.metadata["created"] is False
    assert outcome.metadata["patch"] == (
        "--- a.txt\n+++ a.txt\n@@ -1,2 +1,3 @@\n-old one\n+new one\n same\n+extra\n"
        "\\ No newline at end of file\n"
    )


async def test_empty_content_writes_an_empty_file(ws: Path) -> None:
    outcome = await write(ws, "empty.txt", "")

    assert outcome.output == "Wrote empty.txt (0 lines).\nDiff: +0 -0 lines"
    assert (ws / "empty.txt").read_bytes() == b""


@pytest.mark.parametrize(
    ("before", "content", "after"),
    [
        (b"a\r\nb\r\n", "x\ny\n", b"x\r\ny\r\n"),
        (b"a\r\nb\r\n", "x\r\ny\n", b"x\r\ny\n"),
        (b"a\nb\n", "x\ny\n", b"x\ny\n"),
        (None, "x\ny\n", b"x\ny\n"),
        (None, "x\r\ny\r\n", b"x\r\ny\r\n"),
    ],
    ids=["crlf-file-lf-content", "crlf-content-as-given", "lf-file", "new-lf", "new-crlf"],
)
async def test_line_endings(ws: Path, before: bytes | None, content: str, after: bytes) -> None:
    if before is not None:
        (ws / "f.txt").write_bytes(before)

    await write(ws, "f.txt", content)

    assert (ws / "f.txt").read_bytes() == after


async def test_an_existing_bom_is_kept(ws: Path) -> None:
    (ws / "bom.txt").write_bytes(BOM + b"old\r\n")

    await write(ws, "bom.txt", "new\n")

    assert (ws / "bom.txt").read_bytes() == BOM + b"new\r\n"


async def test_a_bom_in_the_content_is_written_once(ws: Path) -> None:
    (ws / "bom.txt").write_bytes(BOM + b"old\n")

    await write(ws, "bom.txt", "\ufeffnew\n")
    await write(ws, "fresh.txt", "\ufeffnew\n")

    assert (ws / "bom.txt").read_bytes() == BOM + b"new\n"
    assert (ws / "fresh.txt").read_bytes() == BOM + b"new\n"


async def test_a_directory_is_refused(ws: Path) -> None:
    (ws / "src").mkdir()

    outcome = await write(ws, "src", "x")

    assert outcome.is_error
    assert outcome.output == f"Path is a directory, not a file: {ws / 'src'}"


async def test_a_refused_permission_writes_nothing_and_returns_the_message(ws: Path) -> None:
    (ws / "a.txt").write_bytes(b"before\n")
    ask = RecordingAsk(lambda _r: deny("not now", stop_turn=True))

    outcome = await write(ws, "a.txt", "after\n", ask=ask)
    created = await write(ws, "sub/new.txt", "x", ask=RecordingAsk(lambda _r: deny("no")))

    assert outcome.is_error
    assert outcome.output == "not now"
    assert outcome.stop_turn is True
    assert outcome.title == "a.txt"
    assert (ws / "a.txt").read_bytes() == b"before\n"
    assert created.is_error
    assert created.stop_turn is False
    assert not (ws / "sub").exists()


async def test_the_permission_request_carries_the_diff_and_the_display_path(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.txt").write_text("one\n")
    ask = RecordingAsk()

    await write(ws, "src/a.txt", "one\ntwo\n", ask=ask)

    assert [r.permission for r in ask.requests] == ["edit"]
    request = ask.requests[0]
    assert request.patterns == ("src/a.txt",)
    assert request.always == ("*",)
    assert request.title == "Write src/a.txt"
    assert request.subject == {
        "type": "edit",
        "files": [{"path": str(ws / "src" / "a.txt"), "additions": 1, "deletions": 0}],
        "patch": "--- src/a.txt\n+++ src/a.txt\n@@ -1 +1,2 @@\n one\n+two\n",
    }


@pytest.mark.parametrize("how", ["relative", "absolute", "symlinked-folder", "new-folder"])
async def test_outside_paths_ask_external_directory_and_stay_untouched(
    ws: Path, outside_keep: Path, how: str
) -> None:
    (ws / "linked").symlink_to(outside_keep, target_is_directory=True)
    path = {
        "relative": "../outside/secret.txt",
        "absolute": str(outside_keep / "secret.txt"),
        "symlinked-folder": "linked/secret.txt",
        "new-folder": "../elsewhere/new.txt",
    }[how]
    ask = RecordingAsk(lambda r: ALLOWED if r.permission != "external_directory" else deny())

    outcome = await write(ws, path, "overwritten\n", ask=ask)

    assert outcome.is_error
    assert "outside the workspace" in outcome.output
    assert ask.permissions() == ["external_directory"]
    assert (outside_keep / "secret.txt").read_bytes() == b"keep\n"
    assert not (ws.parent / "elsewhere").exists()


async def test_workspace_only_refuses_outside_writes(ws: Path, outside: Path) -> None:
    outcome = await write(ws, str(outside / "new.txt"), "x", ask=workspace_only)

    assert outcome.is_error
    assert not (outside / "new.txt").exists()


async def test_the_write_keeps_the_mode_and_leaves_no_temp_files(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("echo one\n")
    script.chmod(0o751)

    await write(ws, "run.sh", "echo two\n")

    assert script.read_text() == "echo two\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert sorted(p.name for p in ws.iterdir()) == ["run.sh"]


async def test_a_new_file_gets_the_umask_mode(ws: Path) -> None:
    umask = os.umask(0o022)
    try:
        await write(ws, "new.txt", "x")
    finally:
        os.umask(umask)

    assert stat.S_IMODE((ws / "new.txt").stat().st_mode) == 0o644


async def test_a_failed_write_is_an_error_and_leaves_no_temp_files(ws: Path) -> None:
    (ws / "plain").write_text("a file, not a folder\n")

    outcome = await write(ws, "plain/new.txt", "x")

    assert outcome.is_error
    assert outcome.output.startswith(f"Cannot write {ws / 'plain' / 'new.txt'}:")
    assert sorted(p.name for p in ws.iterdir()) == ["plain"]


async def test_a_file_changed_during_the_ask_is_not_overwritten(ws: Path) -> None:
    path = ws / "a.txt"
    path.write_text("v1\n")

    async def meddle(request: PermissionRequest) -> PermissionVerdict:
        path.write_text("v2 by the user\n")
        return ALLOWED

    outcome = await write(ws, "a.txt", "v3\n", ask=meddle)

    assert outcome.is_error
    assert outcome.output == (
        "a.txt changed after the write was approved; nothing was written. "
        "Read it again, then write it."
    )
    assert path.read_text() == "v2 by the user\n"


async def test_a_file_created_during_the_ask_is_not_overwritten(ws: Path) -> None:
    path = ws / "a.txt"

    async def meddle(request: PermissionRequest) -> PermissionVerdict:
        path.write_text("theirs\n")
        return ALLOWED

    outcome = await write(ws, "a.txt", "mine\n", ask=meddle)

    assert outcome.is_error
    assert path.read_text() == "theirs\n"


async def test_the_editor_buffer_is_the_base_text(ws: Path) -> None:
    (ws / "a.txt").write_text("on disk\n")
    editor = RecordingEditor(buffers={str(ws / "a.txt"): "unsaved\n"})
    ask = RecordingAsk()

    outcome = await write(ws, "a.txt", "new\n", ask=ask, editor=editor)

    assert not outcome.is_error
    assert (ws / "a.txt").read_text() == "new\n"
    assert ask.requests[0].subject is not None
    assert "-unsaved\n+new\n" in ask.requests[0].subject["patch"]


# --- files.py ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "newline"),
    [
        ("a\nb\n", "\n"),
        ("a\r\nb\r\n", "\r\n"),
        ("a\r\nb\nc\n", "\n"),
        ("a\r\nb\r\nc\n", "\r\n"),
        ("", "\n"),
    ],
)
def test_detect_newline_is_the_dominant_ending(text: str, newline: str) -> None:
    assert detect_newline(text) == newline


@pytest.mark.parametrize(("text", "lines"), [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2)])
def test_count_lines(text: str, lines: int) -> None:
    assert count_lines(text) == lines


def test_unified_diff_counts_and_marks_a_missing_final_newline() -> None:
    diff = unified_diff("a\nb", "a\nc\n", "f.txt")

    assert diff == FileDiff(
        patch="--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n",
        additions=1,
        deletions=1,
    )


def test_unified_diff_of_a_deletion_and_of_lines_that_look_like_headers() -> None:
    diff = unified_diff("--x\n++y\n", None, "f.txt")

    assert diff.patch == "--- f.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n---x\n-++y\n"
    assert (diff.additions, diff.deletions) == (0, 2)


def test_unified_diff_shows_crlf_as_lf_and_no_change_as_nothing() -> None:
    assert unified_diff("a\r\nb\r\n", "a\r\nc\r\n", "f").patch.endswith("-b\n+c\n")
    assert unified_diff("same\n", "same\n", "f") == FileDiff(patch="", additions=0, deletions=0)


def test_write_atomic_replaces_a_file_keeping_its_mode(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    target = tmp_path / "dir" / "f.txt"
    target.write_bytes(b"old")
    target.chmod(0o600)

    write_atomic(str(target), b"new")

    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in (tmp_path / "dir").iterdir()] == ["f.txt"]


async def test_file_locks_serialize_holders_of_one_path_only() -> None:
    locks = FileLocks()
    order: list[str] = []

    async def hold(name: str, *paths: str) -> None:
        async with locks.hold(*paths):
            order.append(f"{name}+")
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            order.append(f"{name}-")

    await asyncio.gather(hold("a", "/x"), hold("b", "/x"), hold("c", "/y"))

    assert order.index("a-") < order.index("b+")
    assert order.index("c+") < order.index("a-")
    assert locks.held() == ()


async def test_file_locks_take_several_paths_in_one_order() -> None:
    locks = FileLocks()
    done: list[str] = []

    async def hold(name: str, *paths: str) -> None:
        async with locks.hold(*paths):
            await asyncio.sleep(0)
            done.append(name)

    await asyncio.wait_for(
        asyncio.gather(hold("ab", "/a", "/b"), hold("ba", "/b", "/a", "/a")), timeout=5
    )

    assert sorted(done) == ["ab", "ba"]
    assert locks.held() == ()


async def test_a_cancelled_waiter_releases_its_place() -> None:
    locks = FileLocks()
    release = asyncio.Event()

    async def holder() -> None:
        async with locks.hold("/x"):
            await release.wait()

    first = asyncio.create_task(holder())
    await asyncio.sleep(0)
    waiter = asyncio.create_task(holder())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    release.set()
    await first

    assert locks.held() == ()
