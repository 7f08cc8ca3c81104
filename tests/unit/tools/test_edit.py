"""The edit tool against real files in a temporary workspace."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest

from lsp_agent.core.documents import FilePreview
from lsp_agent.core.permission.rules import ALLOWED, PermissionRequest, PermissionVerdict
from lsp_agent.core.tool_details import FileChangeDetails
from lsp_agent.core.tooling import AskPermission, ToolOutcome
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import RecordingAsk, allow_all, deny, workspace_only
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.edit import EditParams, EditTool
from lsp_agent.workspace.files import FileLocks

BOM = b"\xef\xbb\xbf"


@pytest.fixture
def outside_keep(outside: Path) -> Path:
    """The shared ``outside`` folder; its ``secret.txt`` holds ``keep = 1`` (asserted intact)."""
    (outside / "secret.txt").write_bytes(b"keep = 1\n")
    return outside


async def edit(
    ws: Path,
    file_path: str,
    old: str,
    new: str,
    *,
    replace_all: bool = False,
    ask: AskPermission = allow_all,
    editor: RecordingEditor | None = None,
    tool: EditTool | None = None,
) -> ToolOutcome:
    params = EditParams(
        file_path=file_path, old_string=old, new_string=new, replace_all=replace_all
    )
    ctx = tool_context(ws, ask=ask, editor=editor)
    return await (tool or EditTool(FileLocks())).run(params, ctx)


async def test_a_unique_match_is_replaced(ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\ny = 2\n")

    outcome = await edit(ws, "a.py", "y = 2", "y = 3")

    assert not outcome.is_error
    assert (ws / "a.py").read_text() == "x = 1\ny = 3\n"
    assert outcome.output == "Edited a.py: 1 replacement.\nDiff: +1 -1 lines"
    assert outcome.title == "a.py"
    assert outcome.details == FileChangeDetails(
        path=str(ws / "a.py"),
        additions=1,
        deletions=1,
        patch="--- a.py\n+++ a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n",
        replacements=1,
        matcher="exact",
        created=False,
    )


async def test_identical_strings_are_refused_before_anything_else(ws: Path) -> None:
    ask = RecordingAsk()

    outcome = await edit(ws, "missing.py", "same", "same", ask=ask)

    assert outcome.is_error
    assert outcome.output == "No changes to apply: old_string and new_string are identical."
    assert ask.requests == []


async def test_an_empty_old_string_creates_a_missing_file_and_its_folders(ws: Path) -> None:
    outcome = await edit(ws, "pkg/sub/new.py", "", "print(1)\nprint(2)\n")

    assert not outcome.is_error
    assert (ws / "pkg" / "sub" / "new.py").read_text() == "print(1)\nprint(2)\n"
    assert outcome.output == "Created pkg/sub/new.py (2 lines).\nDiff: +2 -0 lines"
    assert outcome.details.created is True
    assert outcome.details.patch.startswith("--- /dev/null\n+++ pkg/sub/new.py\n")


async def test_an_empty_old_string_on_an_existing_file_is_refused(ws: Path) -> None:
    (ws / "a.py").write_text("keep\n")

    outcome = await edit(ws, "a.py", "", "new\n")

    assert outcome.is_error
    assert "old_string cannot be empty" in outcome.output
    assert "write" in outcome.output
    assert (ws / "a.py").read_text() == "keep\n"


async def test_an_empty_old_string_fills_an_existing_empty_file(ws: Path) -> None:
    (ws / "empty.txt").write_text("")

    outcome = await edit(ws, "empty.txt", "", "filled\n")

    assert outcome.output == "Wrote empty.txt (1 line).\nDiff: +1 -0 lines"
    assert (ws / "empty.txt").read_text() == "filled\n"


async def test_a_missing_file_suggests_similar_siblings(ws: Path) -> None:
    (ws / "main.py").write_text("x")

    outcome = await edit(ws, "Main.py.bak", "x", "y")

    assert outcome.is_error
    assert outcome.output == (
        f"File not found: {ws / 'Main.py.bak'}\n\nDid you mean one of these?\n{ws / 'main.py'}"
    )
    assert not (ws / "Main.py.bak").exists()


async def test_a_directory_is_refused(ws: Path) -> None:
    (ws / "src").mkdir()

    outcome = await edit(ws, "src", "a", "b")

    assert outcome.is_error
    assert outcome.output == f"Path is a directory, not a file: {ws / 'src'}"


async def test_a_binary_file_is_refused(ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"a\x00b")

    outcome = await edit(ws, "blob.bin", "a", "b")

    assert outcome.is_error
    assert outcome.output == f"Cannot change binary file: {ws / 'blob.bin'}"


async def test_not_found_leaves_the_file_alone(ws: Path) -> None:
    (ws / "a.py").write_text("alpha\n")
    ask = RecordingAsk()

    outcome = await edit(ws, "a.py", "omega", "x", ask=ask)

    assert outcome.is_error
    assert outcome.output.startswith("Could not find old_string in the file.")
    assert ask.requests == []
    assert (ws / "a.py").read_text() == "alpha\n"


async def test_ambiguity_without_replace_all_leaves_the_file_unchanged(ws: Path) -> None:
    (ws / "a.py").write_bytes(b"f(1)\nf(1)\n")

    outcome = await edit(ws, "a.py", "f(1)", "g(1)")

    assert outcome.is_error
    assert outcome.output == (
        "Found 2 matches for old_string. Provide more surrounding lines to make it unique, "
        "or set replace_all to true."
    )
    assert (ws / "a.py").read_bytes() == b"f(1)\nf(1)\n"


async def test_replace_all_replaces_every_occurrence(ws: Path) -> None:
    (ws / "a.py").write_text("f(1)\nf(2)\nf(3)\n")

    outcome = await edit(ws, "a.py", "f(", "g(", replace_all=True)

    assert outcome.output == "Edited a.py: 3 replacements.\nDiff: +3 -3 lines"
    assert (ws / "a.py").read_text() == "g(1)\ng(2)\ng(3)\n"


async def test_a_misindented_old_string_is_matched_and_new_string_reindented(ws: Path) -> None:
    (ws / "a.py").write_text("class A:\n    def f(self):\n        return 1\n")

    outcome = await edit(ws, "a.py", "def f(self):\n  return 1", "def f(self):\n  return 2")

    assert not outcome.is_error
    assert (ws / "a.py").read_text() == "class A:\n    def f(self):\n        return 2\n"
    assert outcome.details.matcher == "line_trimmed"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("if x:\n    y = 1", "        if x:\n            y = 2"),
        ("if x:\r\n    y = 1", "        if x:\r\n            y = 2"),
        ("if x:\r\n    y = 1", "if x:\r\n    y = 2"),
    ],
    ids=["lf-strings-like-the-file", "crlf-strings-like-the-file", "crlf-strings-like-old"],
)
async def test_a_crlf_block_under_a_method_is_indented_once(ws: Path, old: str, new: str) -> None:
    (ws / "a.py").write_bytes(
        b"class A:\r\n    def f(self):\r\n        if x:\r\n            y = 1\r\n"
    )

    outcome = await edit(ws, "a.py", old, new)

    assert outcome.output == "Edited a.py: 1 replacement.\nDiff: +1 -1 lines"
    assert (ws / "a.py").read_bytes() == (
        b"class A:\r\n    def f(self):\r\n        if x:\r\n            y = 2\r\n"
    )


async def test_an_undecidable_indentation_is_refused_before_the_ask(ws: Path) -> None:
    (ws / "a.py").write_text("class A:\n    def f(self):\n        x = 1\n        return x\n")
    ask = RecordingAsk()

    outcome = await edit(ws, "a.py", "x = 1\nreturn x", "    x = 2\n    y = 3", ask=ask)

    assert outcome.is_error
    assert "indented exactly as in the file" in outcome.output
    assert ask.requests == []
    assert (ws / "a.py").read_text() == (
        "class A:\n    def f(self):\n        x = 1\n        return x\n"
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [("two\nthree", "2\n3"), ("two\r\nthree", "2\r\n3")],
    ids=["lf-strings", "crlf-strings"],
)
async def test_a_crlf_file_stays_crlf(ws: Path, old: str, new: str) -> None:
    (ws / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\nfour\r\n")

    outcome = await edit(ws, "win.txt", old, new)

    assert not outcome.is_error
    assert (ws / "win.txt").read_bytes() == b"one\r\n2\r\n3\r\nfour\r\n"


@pytest.mark.parametrize(
    ("old", "new"),
    [("two\nthree", "2\n3"), ("two\r\nthree", "2\r\n3")],
    ids=["lf-strings", "crlf-strings"],
)
async def test_an_lf_file_stays_lf(ws: Path, old: str, new: str) -> None:
    (ws / "unix.txt").write_bytes(b"one\ntwo\nthree\nfour\n")

    await edit(ws, "unix.txt", old, new)

    assert (ws / "unix.txt").read_bytes() == b"one\n2\n3\nfour\n"


async def test_replace_all_in_a_crlf_file(ws: Path) -> None:
    (ws / "win.txt").write_bytes(b"a\r\nb\r\na\r\n")

    await edit(ws, "win.txt", "a\n", "x\ny\n", replace_all=True)

    assert (ws / "win.txt").read_bytes() == b"x\r\ny\r\nb\r\nx\r\ny\r\n"


async def test_lines_outside_the_edit_keep_their_own_endings(ws: Path) -> None:
    (ws / "mixed.txt").write_bytes(b"a\r\nb\r\nc\nd\r\n")

    await edit(ws, "mixed.txt", "b", "B")

    assert (ws / "mixed.txt").read_bytes() == b"a\r\nB\r\nc\nd\r\n"


async def test_the_bom_is_kept(ws: Path) -> None:
    (ws / "bom.txt").write_bytes(BOM + b"first\nsecond\n")

    outcome = await edit(ws, "bom.txt", "first", "1st")

    assert not outcome.is_error
    assert (ws / "bom.txt").read_bytes() == BOM + b"1st\nsecond\n"


async def test_bytes_that_are_not_utf8_survive_an_edit_elsewhere(ws: Path) -> None:
    (ws / "latin1.txt").write_bytes(b"caf\xe9\nx = 1\n")

    outcome = await edit(ws, "latin1.txt", "x = 1", "x = 2")

    assert not outcome.is_error
    assert (ws / "latin1.txt").read_bytes() == b"caf\xe9\nx = 2\n"
    assert "\ufffd" in outcome.details.patch


class Gate:
    """Holds every ask until ``count`` asks have arrived, then allows them all."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.arrived = 0
        self.open = asyncio.Event()

    async def __call__(self, request: PermissionRequest) -> PermissionVerdict:
        self.arrived += 1
        if self.arrived == self.count:
            self.open.set()
        await self.open.wait()
        return ALLOWED


async def test_two_concurrent_edits_to_one_file_both_land(ws: Path) -> None:
    (ws / "a.py").write_text("alpha = 1\nmiddle\nomega = 1\n")
    tool = EditTool(FileLocks())
    gate = Gate(2)

    first, second = await asyncio.gather(
        edit(ws, "a.py", "alpha = 1", "alpha = 2", ask=gate, tool=tool),
        edit(ws, "a.py", "omega = 1", "omega = 2", ask=gate, tool=tool),
    )

    assert not first.is_error
    assert not second.is_error
    assert (ws / "a.py").read_text() == "alpha = 2\nmiddle\nomega = 2\n"


async def test_a_change_during_the_ask_that_breaks_the_edit_is_reported(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("x = 1\n")

    async def meddle(request: PermissionRequest) -> PermissionVerdict:
        path.write_text("x = 99\n")
        return ALLOWED

    outcome = await edit(ws, "a.py", "x = 1", "x = 2", ask=meddle)

    assert outcome.is_error
    assert outcome.output.startswith(
        "a.py changed after the edit was approved, and the edit no longer applies; "
        "nothing was written. Could not find old_string"
    )
    assert path.read_text() == "x = 99\n"


async def test_a_change_during_the_ask_elsewhere_in_the_file_is_kept(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("x = 1\ny = 1\n")

    async def meddle(request: PermissionRequest) -> PermissionVerdict:
        path.write_text("x = 1\ny = 99\n")
        return ALLOWED

    outcome = await edit(ws, "a.py", "x = 1", "x = 2", ask=meddle)

    assert not outcome.is_error
    assert path.read_text() == "x = 2\ny = 99\n"


async def test_a_refused_permission_writes_nothing_and_returns_the_message(ws: Path) -> None:
    (ws / "a.py").write_bytes(b"x = 1\n")
    ask = RecordingAsk(lambda _r: deny("no thanks", stop_turn=True))

    outcome = await edit(ws, "a.py", "x = 1", "x = 2", ask=ask)

    assert outcome.is_error
    assert outcome.output == "no thanks"
    assert outcome.stop_turn is True
    assert outcome.title == "a.py"
    assert (ws / "a.py").read_bytes() == b"x = 1\n"


async def test_a_refused_creation_creates_nothing(ws: Path) -> None:
    ask = RecordingAsk(lambda _r: deny("no"))

    outcome = await edit(ws, "new/file.py", "", "x\n", ask=ask)

    assert outcome.is_error
    assert outcome.stop_turn is False
    assert not (ws / "new").exists()


async def test_the_permission_request_carries_the_diff_and_the_display_path(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x = 1\ny = 2\n")
    ask = RecordingAsk()

    await edit(ws, str(ws / "src" / "a.py"), "y = 2", "y = 3\nz = 4", ask=ask)

    assert len(ask.requests) == 1
    request = ask.requests[0]
    assert request.permission == "edit"
    assert request.patterns == ("src/a.py",)
    assert request.always == ("*",)
    assert request.title == "Edit src/a.py"
    assert request.subject is not None
    assert request.subject.to_json() == {
        "type": "edit",
        "files": [{"path": str(ws / "src" / "a.py"), "additions": 2, "deletions": 1}],
        "patch": ("--- src/a.py\n+++ src/a.py\n@@ -1,2 +1,3 @@\n x = 1\n-y = 2\n+y = 3\n+z = 4\n"),
    }


@pytest.mark.parametrize("how", ["relative", "absolute", "symlinked-folder"])
async def test_outside_paths_ask_external_directory_and_stay_untouched(
    ws: Path, outside_keep: Path, how: str
) -> None:
    (ws / "linked").symlink_to(outside_keep, target_is_directory=True)
    path = {
        "relative": "../outside/secret.txt",
        "absolute": str(outside_keep / "secret.txt"),
        "symlinked-folder": "linked/secret.txt",
    }[how]
    ask = RecordingAsk(lambda r: ALLOWED if r.permission != "external_directory" else deny())

    outcome = await edit(ws, path, "keep = 1", "keep = 2", ask=ask)

    assert outcome.is_error
    assert "outside the workspace" in outcome.output
    assert ask.permissions() == ["external_directory"]
    assert (outside_keep / "secret.txt").read_bytes() == b"keep = 1\n"


async def test_an_outside_file_is_not_created(ws: Path, outside: Path) -> None:
    outcome = await edit(ws, "../outside/sub/new.py", "", "x\n", ask=workspace_only)

    assert outcome.is_error
    assert outcome.output.endswith("not approved: outside the workspace")
    assert not (outside / "sub").exists()


async def test_the_write_is_atomic_keeps_the_mode_and_leaves_no_temp_files(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("echo one\n")
    script.chmod(0o754)

    await edit(ws, "run.sh", "one", "two")

    assert script.read_text() == "echo two\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o754
    assert sorted(p.name for p in ws.iterdir()) == ["run.sh"]


async def test_a_failed_write_is_an_error_and_leaves_no_temp_files(ws: Path) -> None:
    (ws / "plain").write_text("a file, not a folder\n")

    outcome = await edit(ws, "plain/new.py", "", "x\n")

    assert outcome.is_error
    assert outcome.output.startswith(f"Cannot write {ws / 'plain' / 'new.py'}:")
    assert sorted(p.name for p in ws.iterdir()) == ["plain"]


async def test_editing_through_a_symlink_changes_the_target_and_keeps_the_link(
    ws: Path,
) -> None:
    (ws / "real.py").write_text("x = 1\n")
    (ws / "alias.py").symlink_to(ws / "real.py")

    outcome = await edit(ws, "alias.py", "x = 1", "x = 2")

    assert outcome.title == "real.py"
    assert (ws / "alias.py").is_symlink()
    assert (ws / "real.py").read_text() == "x = 2\n"


# --- open documents ----------------------------------------------------------------------


async def test_an_open_document_is_edited_through_the_editor_not_on_disk(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("on disk\n")
    editor = RecordingEditor(buffers={str(path): "unsaved line\nmore\n"})
    ask = RecordingAsk()

    outcome = await edit(ws, "a.py", "unsaved line", "new line", ask=ask, editor=editor)

    assert not outcome.is_error, outcome.output
    assert outcome.output == "Edited a.py: 1 replacement.\nDiff: +1 -1 lines"
    assert path.read_text() == "on disk\n"
    assert editor.applied == [(str(path), "unsaved line\nmore\n", "new line\nmore\n")]
    (request,) = ask.requests
    assert request.subject is not None
    assert "-unsaved line\n+new line\n" in request.subject.to_json()["patch"]
    assert request.previews == (
        FilePreview(
            path=str(path), base_text="unsaved line\nmore\n", proposed_text="new line\nmore\n"
        ),
    )


async def test_a_closed_file_is_edited_on_disk_with_a_preview(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("x = 1\n")
    editor = RecordingEditor()
    ask = RecordingAsk()

    outcome = await edit(ws, "a.py", "x = 1", "x = 2", ask=ask, editor=editor)

    assert not outcome.is_error, outcome.output
    assert path.read_text() == "x = 2\n"
    assert editor.applied == []
    assert ask.requests[0].previews == (
        FilePreview(path=str(path), base_text="x = 1\n", proposed_text="x = 2\n"),
    )


async def test_an_empty_open_document_is_filled_through_the_editor(ws: Path) -> None:
    path = ws / "new.py"  # open in the editor, never saved
    editor = RecordingEditor(buffers={str(path): ""})

    outcome = await edit(ws, "new.py", "", "x = 1\n", editor=editor)

    assert not outcome.is_error, outcome.output
    assert editor.applied == [(str(path), "", "x = 1\n")]
    assert not path.exists()


async def test_typing_elsewhere_during_the_ask_is_kept(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("a = 1\nb = 2\n")
    editor = RecordingEditor(buffers={str(path): "a = 1\nb = 2\n"})

    async def user_types(request: PermissionRequest) -> PermissionVerdict:
        editor.buffers[str(path)] = "a = 1\nb = 2\nc = 3\n"
        return ALLOWED

    outcome = await edit(ws, "a.py", "a = 1", "a = 10", ask=user_types, editor=editor)

    assert not outcome.is_error, outcome.output
    assert editor.buffers[str(path)] == "a = 10\nb = 2\nc = 3\n"
    assert path.read_text() == "a = 1\nb = 2\n"


async def test_typing_over_the_edit_during_the_ask_is_reported(ws: Path) -> None:
    path = ws / "a.py"
    editor = RecordingEditor(buffers={str(path): "a = 1\n"})

    async def user_types(request: PermissionRequest) -> PermissionVerdict:
        editor.buffers[str(path)] = "a = 5\n"
        return ALLOWED

    outcome = await edit(ws, "a.py", "a = 1", "a = 10", ask=user_types, editor=editor)

    assert outcome.is_error
    assert outcome.output.startswith("a.py changed after the edit was approved")
    assert editor.buffers[str(path)] == "a = 5\n"
    assert editor.applied == []


class TypesBeforeTheEdit(RecordingEditor):
    """The user types after the tool's last read and before its edit reaches the buffer."""

    def __init__(self, path: str, text: str, typed: str) -> None:
        super().__init__(buffers={path: text})
        self._path = path
        self._typed = typed

    async def open_document_text(self, path: str) -> str | None:
        text = await super().open_document_text(path)
        if len(self.opened) == 2:  # the read under the lock, just before the edit
            self.buffers[self._path] = self._typed
        return text


async def test_a_buffer_that_changed_just_before_the_edit_is_a_conflict(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("a = 1\n")
    editor = TypesBeforeTheEdit(str(path), "a = 1\n", "a = 1\ntyped\n")

    outcome = await edit(ws, "a.py", "a = 1", "a = 10", editor=editor)

    assert outcome.is_error
    assert outcome.output == (
        "a.py changed in the editor (the buffer no longer holds the text that was read); "
        "nothing was written. Read it again, then retry."
    )
    assert editor.buffers[str(path)] == "a = 1\ntyped\n"
    assert path.read_text() == "a = 1\n"


async def test_an_edit_the_editor_refuses_is_a_conflict(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("a = 1\n")
    editor = RecordingEditor(buffers={str(path): "a = 1\n"}, refuse_edits=[str(path)])

    outcome = await edit(ws, "a.py", "a = 1", "a = 10", editor=editor)

    assert outcome.is_error
    assert outcome.output == (
        "a.py changed in the editor (the editor refused the edit); nothing was written. "
        "Read it again, then retry."
    )
    assert editor.buffers[str(path)] == "a = 1\n"
    assert path.read_text() == "a = 1\n"


@pytest.mark.parametrize(
    ("buffer", "edited"),
    [
        ("a = 1\r\nb = 2\r\n", "a = 10\r\nx\r\nb = 2\r\n"),
        ("\ufeffa = 1\nb = 2\n", "\ufeffa = 10\nx\nb = 2\n"),
        ("\ufeffa = 1\r\nb = 2\n", "\ufeffa = 10\r\nx\r\nb = 2\n"),
    ],
    ids=["crlf", "bom-in-buffer", "bom-and-mixed-endings"],
)
async def test_the_editor_gets_texts_in_its_buffers_form(
    ws: Path, buffer: str, edited: str
) -> None:
    path = ws / "a.py"
    path.write_bytes(BOM + b"on disk\n")
    editor = RecordingEditor(buffers={str(path): buffer})
    ask = RecordingAsk()

    outcome = await edit(ws, "a.py", "a = 1\n", "a = 10\nx\n", ask=ask, editor=editor)

    assert not outcome.is_error, outcome.output
    assert editor.applied == [(str(path), buffer, edited)]
    assert path.read_bytes() == BOM + b"on disk\n"
    (preview,) = ask.requests[0].previews
    assert preview.base_text == buffer.removeprefix("\ufeff")
    assert preview.proposed_text == edited.removeprefix("\ufeff")


async def test_the_locks_are_released_after_each_edit(ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\n")
    locks = FileLocks()

    await edit(ws, "a.py", "x = 1", "x = 2", tool=EditTool(locks))

    assert locks.held() == ()
