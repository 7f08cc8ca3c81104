"""The write tool against real files, and the shared file helpers (``workspace/files.py``)."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from lsp_agent.core.documents import FilePreview
from lsp_agent.core.permission.rules import ALLOWED, PermissionRequest, PermissionVerdict
from lsp_agent.core.tool_details import FileChangeDetails, PathDetails
from lsp_agent.core.tooling import AskPermission, ToolOutcome
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import RecordingAsk, allow_all, deny, workspace_only
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.write import WriteParams, WriteTool
from lsp_agent.workspace.files import (
    Committed,
    EditedFile,
    FileDiff,
    FileLocks,
    TextFile,
    commit,
    count_lines,
    detect_newline,
    edit_request,
    file_preview,
    unified_diff,
    write_atomic,
)

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
    assert outcome.details == FileChangeDetails(
        path=str(ws / "pkg" / "sub" / "a.txt"),
        additions=2,
        deletions=0,
        patch="--- /dev/null\n+++ pkg/sub/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n",
        created=True,
    )


async def test_an_existing_file_is_replaced_whole(ws: Path) -> None:
    (ws / "a.txt").write_text("old one\nsame\n")

    outcome = await write(ws, "a.txt", "new one\nsame\nextra")

    assert (ws / "a.txt").read_text() == "new one\nsame\nextra"
    assert outcome.output == "Wrote a.txt (3 lines).\nDiff: +2 -1 lines"
    assert outcome.details.created is False
    assert outcome.details.patch == (
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
    assert request.subject is not None
    assert request.subject.to_json() == {
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


# --- open documents ----------------------------------------------------------------------


async def test_an_open_document_is_changed_through_the_editor_not_on_disk(ws: Path) -> None:
    path = ws / "a.txt"
    path.write_text("on disk\n")
    editor = RecordingEditor(buffers={str(path): "unsaved\n"})
    ask = RecordingAsk()

    outcome = await write(ws, "a.txt", "new\n", ask=ask, editor=editor)

    assert not outcome.is_error, outcome.output
    assert outcome.output == "Wrote a.txt (1 line).\nDiff: +1 -1 lines"
    assert path.read_text() == "on disk\n"
    assert editor.applied == [(str(path), "unsaved\n", "new\n")]
    assert editor.buffers[str(path)] == "new\n"
    (request,) = ask.requests
    assert request.subject is not None
    assert "-unsaved\n+new\n" in request.subject.to_json()["patch"]
    assert request.previews == (
        FilePreview(path=str(path), base_text="unsaved\n", proposed_text="new\n"),
    )
    assert [p.name for p in ws.iterdir()] == ["a.txt"]


async def test_a_closed_file_is_written_on_disk_and_the_editor_is_not_asked(ws: Path) -> None:
    editor = RecordingEditor()
    ask = RecordingAsk()

    await write(ws, "a.txt", "new\n", ask=ask, editor=editor)

    assert (ws / "a.txt").read_text() == "new\n"
    assert editor.applied == []
    assert ask.requests[0].previews == (
        FilePreview(path=str(ws / "a.txt"), base_text=None, proposed_text="new\n"),
    )


async def test_a_buffer_typed_in_during_the_ask_is_not_overwritten(ws: Path) -> None:
    path = ws / "a.txt"
    path.write_text("saved\n")
    editor = RecordingEditor(buffers={str(path): "saved\n"})

    async def user_types(request: PermissionRequest) -> PermissionVerdict:
        editor.buffers[str(path)] = "saved\ntyped\n"
        return ALLOWED

    outcome = await write(ws, "a.txt", "mine\n", ask=user_types, editor=editor)

    assert outcome.is_error
    assert "a.txt changed after the write was approved; nothing was written." in outcome.output
    assert editor.buffers[str(path)] == "saved\ntyped\n"
    assert editor.applied == []
    assert path.read_text() == "saved\n"


async def test_a_buffer_closed_unsaved_during_the_ask_is_not_written_on_disk(ws: Path) -> None:
    path = ws / "a.txt"
    path.write_text("saved\n")
    editor = RecordingEditor(buffers={str(path): "unsaved\n"})

    async def user_closes(request: PermissionRequest) -> PermissionVerdict:
        del editor.buffers[str(path)]
        return ALLOWED

    outcome = await write(ws, "a.txt", "mine\n", ask=user_closes, editor=editor)

    assert outcome.is_error
    assert path.read_text() == "saved\n"


async def test_an_edit_the_editor_refuses_is_a_conflict_and_nothing_is_written(
    ws: Path,
) -> None:
    path = ws / "a.txt"
    path.write_text("saved\n")
    editor = RecordingEditor(buffers={str(path): "saved\n"}, refuse_edits=True)

    outcome = await write(ws, "a.txt", "mine\n", editor=editor)

    assert outcome.is_error
    assert outcome.output == (
        "a.txt changed in the editor (the editor refused the edit); nothing was written. "
        "Read it again, then retry."
    )
    assert outcome.details == PathDetails(path=str(path))
    assert editor.buffers[str(path)] == "saved\n"
    assert path.read_text() == "saved\n"


@pytest.mark.parametrize(
    ("disk", "buffer", "content", "sent"),
    [
        # the editor keeps the BOM out of its text (the usual case): none is added
        (BOM + b"old\n", "old\n", "new\n", ("old\n", "new\n")),
        (BOM + b"old\n", "old\n", "\ufeffnew\n", ("old\n", "new\n")),
        # an editor that shows the BOM as U+FEFF gets it back, once
        (BOM + b"old\n", "\ufeffold\n", "new\n", ("\ufeffold\n", "\ufeffnew\n")),
        (b"old\n", "\ufeffold\n", "\ufeffnew\n", ("\ufeffold\n", "\ufeffnew\n")),
        # the buffer's line endings win, as on disk
        (b"a\nb\n", "a\r\nb\r\n", "x\ny\n", ("a\r\nb\r\n", "x\r\ny\r\n")),
        (b"a\r\nb\r\n", "a\nb\n", "x\ny\n", ("a\nb\n", "x\ny\n")),
    ],
    ids=["bom-on-disk", "bom-in-content", "bom-in-buffer", "bom-in-buffer-only", "crlf", "lf"],
)
async def test_the_editor_gets_texts_in_its_buffers_form(
    ws: Path, disk: bytes, buffer: str, content: str, sent: tuple[str, str]
) -> None:
    path = ws / "f.txt"
    path.write_bytes(disk)
    editor = RecordingEditor(buffers={str(path): buffer})
    ask = RecordingAsk()

    outcome = await write(ws, "f.txt", content, ask=ask, editor=editor)

    assert not outcome.is_error, outcome.output
    assert editor.applied == [(str(path), *sent)]
    assert path.read_bytes() == disk
    (preview,) = ask.requests[0].previews
    assert preview.base_text == sent[0].removeprefix("\ufeff")
    assert preview.proposed_text == sent[1].removeprefix("\ufeff")


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


# --- files.commit and the previews -------------------------------------------------------


async def test_commit_writes_the_disk_when_the_base_came_from_the_disk(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    editor = RecordingEditor(buffers={str(path): "old\n"})
    base = TextFile(text="old\n")

    assert await commit(editor, str(path), base, "new\n", b"new\n") == Committed()
    assert await commit(editor, str(tmp_path / "b.txt"), None, "b\n", b"b\n") == Committed()

    assert path.read_text() == "new\n"
    assert (tmp_path / "b.txt").read_text() == "b\n"
    assert editor.applied == []


async def test_commit_goes_through_the_editor_and_reports_a_changed_buffer(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "a.txt")
    editor = RecordingEditor(buffers={path: "typed meanwhile\n"})
    base = TextFile(text="old\n", on_disk=False, source="editor")

    failed = await commit(editor, path, base, "new\n", b"new\n", display="a.txt")

    assert failed == (
        "a.txt changed in the editor (the buffer no longer holds the text that was read); "
        "nothing was written. Read it again, then retry."
    )
    assert editor.buffers[path] == "typed meanwhile\n"
    assert not os.path.exists(path)


async def test_commit_never_writes_the_disk_for_a_document_closed_since_it_was_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    base = TextFile(text="unsaved\n", source="editor")

    failed = await commit(RecordingEditor(), str(path), base, "new\n", b"new\n")

    assert failed == (
        f"{path} was closed in the editor after it was read; nothing was written. "
        "Read it again, then retry."
    )
    assert path.read_text() == "old\n"


def test_edit_request_carries_one_preview_per_file_outside_equality_and_repr() -> None:
    diff = unified_diff("a\n", "b\n", "a.txt")
    files = [
        EditedFile(path="/w/a.txt", diff=diff, base="a\n", proposed="b\n"),
        EditedFile(path="/w/n.txt", diff=diff, base=None, proposed="\udcff\n"),
    ]

    request = edit_request(title="Edit", patterns=("a.txt", "n.txt"), files=files)

    assert request.previews == (
        FilePreview(path="/w/a.txt", base_text="a\n", proposed_text="b\n"),
        FilePreview(path="/w/n.txt", base_text=None, proposed_text="\ufffd\n"),
    )
    assert request == edit_request(
        title="Edit", patterns=("a.txt", "n.txt"), files=[f._replace(proposed="") for f in files]
    )
    assert "previews" not in repr(request)
    assert file_preview("/x", "\ud800", None).base_text == "?"
