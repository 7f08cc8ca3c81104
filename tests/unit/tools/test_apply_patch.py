"""apply_patch: hunks applied to text, then the tool against real files in a temp workspace."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lsp_agent.core.documents import DocumentEditResult, FilePreview
from lsp_agent.core.permission.rules import PermissionRequest, PermissionVerdict
from lsp_agent.core.tooling import AskPermission, ToolOutcome
from lsp_agent.patch.apply import (
    HunkError,
    apply_hunks,
    normalize_punctuation,
    seek_sequence,
    split_text,
)
from lsp_agent.patch.parse import UpdateFile, parse_patch
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import RecordingAsk, allow_all, deny, workspace_only
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.apply_patch import ApplyPatchParams, ApplyPatchTool
from lsp_agent.workspace.files import FileLocks


def envelope(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def update(text: str, *hunk_lines: str) -> str:
    """``text`` after an Update section made of ``hunk_lines``."""
    (operation,) = parse_patch(envelope("*** Update File: f", *hunk_lines)).operations
    assert isinstance(operation, UpdateFile)
    return apply_hunks(text, operation.hunks)


def hunk_error(text: str, *hunk_lines: str) -> HunkError:
    with pytest.raises(HunkError) as info:
        update(text, *hunk_lines)
    return info.value


# --- applying hunks to text ---------------------------------------------------------------


def test_an_exact_hunk_replaces_its_lines() -> None:
    text = "a\nb\nc\nd\n"
    assert update(text, "@@", " b", "-c", "+C", "+C2", " d") == "a\nb\nC\nC2\nd\n"


def test_hunks_apply_in_order_each_after_the_previous() -> None:
    text = "x = 1\nsep\nx = 1\n"
    assert update(text, "@@", "-x = 1", "+x = 2", "@@", "-x = 1", "+x = 3") == (
        "x = 2\nsep\nx = 3\n"
    )


def test_a_hunk_before_the_previous_one_is_not_found() -> None:
    error = hunk_error("a\nb\nc\n", "@@", "-c", "+C", "@@", "-a", "+A")
    assert error.number == 2
    assert str(error).startswith("hunk 2 (patch line 6): could not find the expected lines")
    assert "(searching from line 4)" in str(error)
    assert "    a" in str(error)


def test_context_after_at_at_picks_the_right_occurrence() -> None:
    text = "def f():\n    return 1\n\ndef g():\n    return 1\n"
    assert update(text, "@@ def g():", "-    return 1", "+    return 2") == (
        "def f():\n    return 1\n\ndef g():\n    return 2\n"
    )


def test_several_contexts_narrow_down_step_by_step() -> None:
    text = "class A:\n    def f(self):\n        pass\nclass B:\n    def f(self):\n        pass\n"
    result = update(text, "@@ class B:", "@@ def f(self):", "-        pass", "+        return 1")
    assert result.endswith("class B:\n    def f(self):\n        return 1\n")
    assert result.count("pass") == 1


def test_a_context_may_be_the_start_of_the_line() -> None:
    text = "def f(a, b):\n    return a\n"
    assert update(text, "@@ def f", "-    return a", "+    return b") == (
        "def f(a, b):\n    return b\n"
    )


def test_a_repeated_context_line_still_matches() -> None:
    text = "def f():\n    return 1\n"
    assert update(text, "@@ def f():", " def f():", "-    return 1", "+    return 2") == (
        "def f():\n    return 2\n"
    )


def test_a_missing_context_line_is_named() -> None:
    error = hunk_error("a\nb\n", "@@ def nowhere():", "-a", "+A")
    assert str(error) == "hunk 1 (patch line 3): could not find the context line 'def nowhere():'"


def test_trailing_whitespace_in_the_file_is_tolerated_and_kept() -> None:
    text = "keep   \nold\t\n"
    assert update(text, "@@", " keep", "-old", "+new") == "keep   \nnew\n"


def test_different_indentation_is_tolerated_and_context_keeps_the_files_text() -> None:
    text = "\tif x:\n\t\treturn 1\n"
    assert update(text, "@@", "    if x:", "-        return 1", "+\t\treturn 2") == (
        "\tif x:\n\t\treturn 2\n"
    )


def test_unicode_punctuation_is_folded_for_matching() -> None:
    text = "msg = “it’s done” — ok…\u00a0end\nnext\n"
    result = update(text, "@@", ' msg = "it\'s done" - ok... end', "-next", "+NEXT")
    assert result == "msg = “it’s done” — ok…\u00a0end\nNEXT\n"


def test_an_exact_match_wins_over_an_earlier_fuzzy_one() -> None:
    lines = ["value  ", "x", "value", "x"]
    assert seek_sequence(lines, ["value", "x"], 0) == 2
    assert seek_sequence(lines, ["value ", "x"], 0) == 0
    assert seek_sequence(lines, ["nothing"], 0) is None
    assert seek_sequence(lines, [], 0) is None


def test_an_end_of_file_hunk_matches_the_last_lines_first() -> None:
    text = "end\nmiddle\nend\n"
    assert update(text, "@@", "-end", "+END", "*** End of File") == "end\nmiddle\nEND\n"
    assert update(text, "@@", "-end", "+END") == "END\nmiddle\nend\n"


def test_an_unmatched_trailing_empty_line_is_dropped() -> None:
    text = "a\nb\n"
    assert update(text, "@@", " a", "-b", "+B", "") == "a\nB\n"


def test_an_addition_only_hunk_goes_after_its_context_or_at_the_end() -> None:
    text = "import os\n\ndef f():\n    pass\n"
    assert update(text, "@@ import os", "+import sys") == (
        "import os\nimport sys\n\ndef f():\n    pass\n"
    )
    assert update(text, "@@", "+# end") == text + "# end\n"


def test_crlf_endings_stay_and_new_lines_get_crlf() -> None:
    text = "a\r\nb\r\nc\r\n"
    assert update(text, "@@", " a", "-b", "+B1", "+B2") == "a\r\nB1\r\nB2\r\nc\r\n"


def test_mixed_endings_keep_each_lines_own() -> None:
    text = "a\r\nb\nc\r\nd\r\n"
    assert update(text, "@@", " b", "-c", "+C") == "a\r\nb\nC\r\nd\r\n"


def test_a_bom_stays_and_is_not_part_of_the_first_line() -> None:
    text = "\ufefffirst\nsecond\n"
    assert update(text, "@@", "-first", "+FIRST") == "\ufeffFIRST\nsecond\n"


def test_a_missing_final_newline_stays_missing() -> None:
    assert update("a\nb", "@@", "-b", "+B") == "a\nB"
    assert update("a\nb", "@@", " b", "+c", "*** End of File") == "a\nb\nc"
    assert update("a\nb\n", "@@", " b", "+c") == "a\nb\nc\n"


def test_an_empty_file_gets_lines() -> None:
    assert update("", "@@", "+one") == "one\n"


def test_split_text_facts() -> None:
    facts = split_text("\ufeffa\r\nb\r\nc")
    assert facts.lines == ["a", "b", "c"]
    assert facts.endings == ["\r\n", "\r\n", ""]
    assert facts.bom
    assert facts.newline == "\r\n"
    assert not facts.final_newline
    assert facts.join() == "\ufeffa\r\nb\r\nc"


def test_normalize_punctuation() -> None:
    assert normalize_punctuation("‘a’ “b” c–d—e … \u00a0\u202f") == "'a' \"b\" c-d-e ...   "


# --- the tool -----------------------------------------------------------------------------


async def run(
    ws: Path,
    patch: str,
    ask: AskPermission = allow_all,
    *,
    buffers: dict[str, str] | None = None,
    editor: RecordingEditor | None = None,
    locks: FileLocks | None = None,
) -> ToolOutcome:
    ctx = tool_context(ws, ask=ask, editor=editor or RecordingEditor(buffers=buffers))
    tool = ApplyPatchTool(locks or FileLocks())
    return await tool.run(ApplyPatchParams(patch=patch), ctx)


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``root`` (folders map to None), symlinks not followed."""
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            found[os.path.relpath(os.path.join(folder, name), root)] = None
        for name in files:
            path = Path(folder, name)
            content = (
                b"-> " + os.fsencode(path.readlink()) if path.is_symlink() else path.read_bytes()
            )
            found[os.path.relpath(path, root)] = content
    return found


async def test_add_update_delete_and_move_on_disk(ws: Path) -> None:
    (ws / "app.py").write_text("import os\n\ndef main():\n    run()\n")
    (ws / "old.txt").write_text("bye\n")
    (ws / "name.py").write_text("X = 1\n")
    patch = envelope(
        "*** Add File: pkg/new.py",
        "+def hello():",
        "+    return 'hi'",
        "*** Update File: app.py",
        "@@ def main():",
        "-    run()",
        "+    run(verbose=True)",
        "*** Delete File: old.txt",
        "*** Update File: name.py",
        "*** Move to: renamed/name2.py",
        "@@",
        "-X = 1",
        "+X = 2",
    )

    outcome = await run(ws, patch)

    assert not outcome.is_error, outcome.output
    assert outcome.output == (
        "Success. Updated the following files:\n"
        "A pkg/new.py\nM app.py\nD old.txt\nR name.py -> renamed/name2.py"
    )
    assert (ws / "pkg/new.py").read_text() == "def hello():\n    return 'hi'\n"
    assert (ws / "app.py").read_text() == "import os\n\ndef main():\n    run(verbose=True)\n"
    assert not (ws / "old.txt").exists()
    assert not (ws / "name.py").exists()
    assert (ws / "renamed/name2.py").read_text() == "X = 2\n"
    files = outcome.details.files
    assert [(f.display, f.operation, f.additions, f.deletions) for f in files] == [
        ("pkg/new.py", "add", 2, 0),
        ("app.py", "modify", 1, 1),
        ("old.txt", "delete", 0, 1),
        ("renamed/name2.py", "move", 1, 1),
    ]
    assert files[3].moved_from_display == "name.py"
    assert files[3].moved_from == str(ws / "name.py")
    assert files[1].path == str(ws / "app.py")
    assert "+    run(verbose=True)" in outcome.details.patch
    assert outcome.title == "Apply patch to 4 files"
    assert [p for p in os.listdir(ws) if p.endswith(".tmp")] == []


async def test_one_file_title_is_its_path(ws: Path) -> None:
    outcome = await run(ws, envelope("*** Add File: a.txt", "+a"))
    assert outcome.title == "a.txt"


async def test_one_permission_request_covers_every_file(ws: Path) -> None:
    (ws / "a.py").write_text("a = 1\n")
    (ws / "b.py").write_text("b = 1\n")
    (ws / "c.py").write_text("c\n")
    ask = RecordingAsk()
    patch = envelope(
        "*** Update File: a.py",
        "-a = 1",
        "+a = 2",
        "*** Update File: b.py",
        "*** Move to: sub/b2.py",
        "*** Delete File: c.py",
        "*** Add File: d.py",
        "+d",
    )

    outcome = await run(ws, patch, ask)

    assert not outcome.is_error, outcome.output
    (request,) = ask.requests
    assert request.permission == "edit"
    assert request.patterns == ("a.py", "b.py", "sub/b2.py", "c.py", "d.py")
    assert request.always == ("*",)
    assert request.title == "Apply patch to 4 files"
    assert request.subject is not None
    subject = request.subject.to_json()
    assert subject["type"] == "edit"
    assert subject["files"] == [
        {"path": str(ws / "a.py"), "additions": 1, "deletions": 1, "operation": "modify"},
        {
            "path": str(ws / "sub/b2.py"),
            "additions": 0,
            "deletions": 0,
            "operation": "move",
            "movedFrom": str(ws / "b.py"),
        },
        {"path": str(ws / "c.py"), "additions": 0, "deletions": 1, "operation": "delete"},
        {"path": str(ws / "d.py"), "additions": 1, "deletions": 0, "operation": "add"},
    ]
    assert subject["patch"] == outcome.details.patch
    assert "--- b.py\n+++ sub/b2.py\n" in subject["patch"]
    assert "--- a.py\n+++ a.py\n" in subject["patch"]
    assert "--- /dev/null\n+++ d.py\n" in subject["patch"]


async def test_one_bad_hunk_changes_no_file_at_all(ws: Path) -> None:
    (ws / "a.py").write_text("a = 1\n")
    (ws / "b.py").write_text("one\ntwo\nthree\n")
    (ws / "c.py").write_text("c\n")
    (ws / "a2.py").write_text("m\n")
    before = snapshot(ws.parent)
    ask = RecordingAsk()
    patch = envelope(
        "*** Add File: new/d.py",
        "+d",
        "*** Update File: a.py",
        "-a = 1",
        "+a = 2",
        "*** Update File: b.py",
        "@@",
        "-one",
        "+ONE",
        "@@",
        "-not in the file",
        "+x",
        "*** Delete File: c.py",
        "*** Update File: a2.py",
        "*** Move to: moved.py",
    )

    outcome = await run(ws, patch, ask)

    assert outcome.is_error
    assert outcome.output.startswith(
        "apply_patch verification failed: b.py: hunk 2 (patch line 11): could not find the "
        "expected lines (searching from line 2):\n    not in the file"
    )
    assert outcome.output.endswith("No file was changed.")
    assert snapshot(ws.parent) == before
    assert ask.requests == []


async def test_every_problem_is_reported_at_once(ws: Path) -> None:
    (ws / "exists.txt").write_text("x\n")
    patch = envelope(
        "*** Update File: missing.py",
        "-a",
        "+b",
        "*** Add File: exists.txt",
        "+y",
    )

    outcome = await run(ws, patch)

    assert outcome.is_error
    assert outcome.output.startswith("apply_patch verification failed (2 problems):\n")
    assert "- cannot update missing.py: file not found" in outcome.output
    assert "- cannot add exists.txt: a file already exists there" in outcome.output
    assert (ws / "exists.txt").read_text() == "x\n"


async def test_add_onto_an_existing_file_fails(ws: Path) -> None:
    (ws / "a.txt").write_text("keep me\n")

    outcome = await run(ws, envelope("*** Add File: a.txt", "+replaced"))

    assert outcome.is_error
    assert outcome.output == (
        "apply_patch verification failed: cannot add a.txt: a file already exists there "
        "(use '*** Update File' to change it)\nNo file was changed."
    )
    assert (ws / "a.txt").read_text() == "keep me\n"


async def test_update_or_delete_of_a_directory_or_missing_file_fails(ws: Path) -> None:
    (ws / "folder").mkdir()

    deleted = await run(ws, envelope("*** Delete File: folder"))
    updated = await run(ws, envelope("*** Update File: folder", "-x", "+y"))
    missing = await run(ws, envelope("*** Delete File: nope.txt"))

    assert "cannot delete folder: it is a directory" in deleted.output
    assert "cannot update folder: it is a directory" in updated.output
    assert "cannot delete nope.txt: file not found" in missing.output
    assert (ws / "folder").is_dir()


async def test_add_under_a_file_fails(ws: Path) -> None:
    (ws / "plain").write_text("x")
    outcome = await run(ws, envelope("*** Add File: plain/child.txt", "+c"))
    assert outcome.is_error
    assert "plain is not a directory" in outcome.output


async def test_move_onto_an_existing_file_fails(ws: Path) -> None:
    (ws / "a.py").write_text("a\n")
    (ws / "b.py").write_text("b\n")

    outcome = await run(ws, envelope("*** Update File: a.py", "*** Move to: b.py"))

    assert outcome.is_error
    assert outcome.output == (
        "apply_patch verification failed: cannot move a.py to b.py: a file already exists "
        "there\nNo file was changed."
    )
    assert (ws / "a.py").read_text() == "a\n"
    assert (ws / "b.py").read_text() == "b\n"


async def test_a_file_in_two_sections_is_refused(ws: Path) -> None:
    (ws / "a.py").write_text("a\n")
    (ws / "link.py").symlink_to(ws / "a.py")

    outcome = await run(
        ws,
        envelope("*** Update File: a.py", "-a", "+b", "*** Delete File: link.py"),
    )

    assert outcome.is_error
    assert "a.py is touched by two sections of this patch (patch lines 2 and 5)" in (outcome.output)
    assert (ws / "a.py").read_text() == "a\n"


async def test_fuzzy_matching_on_disk(ws: Path) -> None:
    (ws / "q.py").write_text("def f():  \n    print(“hello”)\n\treturn 1\n")
    patch = envelope(
        "*** Update File: q.py",
        "@@",
        " def f():",
        '     print("hello")',
        "-    return 1",
        "+\treturn 2",
    )

    outcome = await run(ws, patch)

    assert not outcome.is_error, outcome.output
    assert (ws / "q.py").read_text() == "def f():  \n    print(“hello”)\n\treturn 2\n"


async def test_crlf_and_bom_are_kept_on_disk(ws: Path) -> None:
    (ws / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")

    outcome = await run(ws, envelope("*** Update File: win.txt", " one", "-two", "+2", "+2b"))

    assert not outcome.is_error, outcome.output
    assert (ws / "win.txt").read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n2b\r\nthree\r\n"


async def test_bytes_that_are_not_utf8_survive_an_update(ws: Path) -> None:
    (ws / "latin1.txt").write_bytes(b"caf\xe9\nold\n")

    outcome = await run(ws, envelope("*** Update File: latin1.txt", "-old", "+new"))

    assert not outcome.is_error, outcome.output
    assert (ws / "latin1.txt").read_bytes() == b"caf\xe9\nnew\n"


async def test_a_binary_file_cannot_be_updated_but_can_be_deleted(ws: Path) -> None:
    (ws / "bin.dat").write_bytes(b"\xff\xfe\x00junk")

    updated = await run(ws, envelope("*** Update File: bin.dat", "-junk", "+x"))
    deleted = await run(ws, envelope("*** Delete File: bin.dat"))

    assert updated.is_error
    assert "cannot update bin.dat: Cannot change binary file" in updated.output
    assert not deleted.is_error
    assert deleted.details.patch == "Binary file bin.dat deleted\n"
    assert not (ws / "bin.dat").exists()


# --- open documents ----------------------------------------------------------------------


async def test_an_open_document_is_updated_through_the_editor_not_on_disk(ws: Path) -> None:
    target = ws / "a.py"
    target.write_text("on disk\n")
    (ws / "b.py").write_text("b\n")
    editor = RecordingEditor(buffers={str(target): "unsaved\nline\n"})

    outcome = await run(
        ws,
        envelope(
            "*** Update File: a.py",
            " unsaved",
            "-line",
            "+LINE",
            "*** Update File: b.py",
            "-b",
            "+B",
        ),
        editor=editor,
    )

    assert not outcome.is_error, outcome.output
    assert outcome.output == "Success. Updated the following files:\nM a.py\nM b.py"
    assert target.read_text() == "on disk\n"
    assert editor.applied == [(str(target), "unsaved\nline\n", "unsaved\nLINE\n")]
    assert (ws / "b.py").read_text() == "B\n"


async def test_every_file_of_the_ask_has_a_preview(ws: Path) -> None:
    (ws / "open.py").write_text("saved\n")
    (ws / "old.txt").write_bytes(b"bye \xff\n")
    (ws / "name.py").write_text("X = 1\n")
    editor = RecordingEditor(buffers={str(ws / "open.py"): "unsaved\n"})
    ask = RecordingAsk()
    patch = envelope(
        "*** Add File: new.py",
        "+hi",
        "*** Update File: open.py",
        "-unsaved",
        "+changed",
        "*** Delete File: old.txt",
        "*** Update File: name.py",
        "*** Move to: sub/name2.py",
        "-X = 1",
        "+X = 2",
    )

    outcome = await run(ws, patch, ask, editor=editor)

    assert not outcome.is_error, outcome.output
    (request,) = ask.requests
    assert request.previews == (
        FilePreview(path=str(ws / "new.py"), base_text=None, proposed_text="hi\n"),
        FilePreview(path=str(ws / "open.py"), base_text="unsaved\n", proposed_text="changed\n"),
        FilePreview(path=str(ws / "old.txt"), base_text="bye \ufffd\n", proposed_text=None),
        FilePreview(path=str(ws / "sub/name2.py"), base_text="X = 1\n", proposed_text="X = 2\n"),
        FilePreview(path=str(ws / "name.py"), base_text="X = 1\n", proposed_text=None),
    )


async def test_a_refused_editor_edit_rolls_back_the_disk(ws: Path) -> None:
    (ws / "open.py").write_text("saved\n")
    (ws / "closed.py").write_text("c\n")
    before = snapshot(ws)
    editor = RecordingEditor(buffers={str(ws / "open.py"): "unsaved\n"}, refuse_edits=True)

    outcome = await run(
        ws,
        envelope(
            "*** Update File: closed.py",
            "-c",
            "+C",
            "*** Update File: open.py",
            "-unsaved",
            "+changed",
            "*** Add File: deep/er/new.py",
            "+n",
        ),
        editor=editor,
    )

    assert outcome.is_error
    assert outcome.output == (
        "apply_patch failed: open.py changed in the editor (the editor refused the edit). "
        "Every file was restored: no file was changed.\n"
        "Read the files again and make a new patch."
    )
    assert snapshot(ws) == before
    assert editor.buffers[str(ws / "open.py")] == "unsaved\n"


async def test_documents_already_edited_are_changed_back_when_a_later_one_conflicts(
    ws: Path,
) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (ws / name).write_text(f"{name} saved\n")
    before = snapshot(ws)
    buffers = {str(ws / "a.py"): "a\n", str(ws / "b.py"): "b\n"}
    editor = RecordingEditor(buffers=buffers, refuse_edits={str(ws / "b.py")})

    outcome = await run(
        ws,
        envelope(
            "*** Update File: a.py",
            "-a",
            "+A",
            "*** Update File: b.py",
            "-b",
            "+B",
            "*** Update File: c.py",
            "-c.py saved",
            "+C",
        ),
        editor=editor,
    )

    assert outcome.is_error
    assert outcome.output.startswith(
        "apply_patch failed: b.py changed in the editor (the editor refused the edit). "
        "Every file was restored"
    )
    assert editor.applied == [(str(ws / "a.py"), "a\n", "A\n"), (str(ws / "a.py"), "A\n", "a\n")]
    assert editor.buffers == buffers
    assert snapshot(ws) == before


class TypesAfterTheEdit(RecordingEditor):
    """The user types into ``typed`` as soon as the patch's edit of it is applied."""

    def __init__(self, buffers: dict[str, str], typed: str) -> None:
        super().__init__(buffers=buffers, refuse_edits={p for p in buffers if p != typed})
        self._typed = typed

    async def apply_document_edit(
        self, path: str, base_text: str, new_text: str
    ) -> DocumentEditResult:
        result = await super().apply_document_edit(path, base_text, new_text)
        if path == self._typed and result.status == "applied":
            self.buffers[path] += "typed\n"
        return result


async def test_a_document_that_cannot_be_changed_back_is_named(ws: Path) -> None:
    (ws / "a.py").write_text("a\n")
    (ws / "b.py").write_text("b\n")
    buffers = {str(ws / "a.py"): "a\n", str(ws / "b.py"): "b\n"}
    editor = TypesAfterTheEdit(buffers, typed=str(ws / "a.py"))

    outcome = await run(
        ws,
        envelope("*** Update File: a.py", "-a", "+A", "*** Update File: b.py", "-b", "+B"),
        editor=editor,
    )

    assert outcome.is_error
    assert outcome.output == (
        "apply_patch failed: b.py changed in the editor (the editor refused the edit). "
        "Restoring the files touched so far failed too; check them:\n"
        "- a.py changed in the editor (the buffer no longer holds the text that was read), "
        "so the patch's change to it could not be undone\n"
        "Read the files again and make a new patch."
    )


async def test_a_buffer_typed_over_during_the_ask_stops_the_patch(ws: Path) -> None:
    (ws / "a.py").write_text("a\n")
    (ws / "b.py").write_text("b\n")
    before = snapshot(ws)
    editor = RecordingEditor(buffers={str(ws / "a.py"): "a\n"})

    def user_types(_request: PermissionRequest) -> PermissionVerdict:
        editor.buffers[str(ws / "a.py")] = "z\n"
        return PermissionVerdict(allowed=True)

    outcome = await run(
        ws,
        envelope("*** Update File: b.py", "-b", "+B", "*** Update File: a.py", "-a", "+A"),
        RecordingAsk(user_types),
        editor=editor,
    )

    assert outcome.is_error
    assert "files changed after the patch was approved" in outcome.output
    assert snapshot(ws) == before
    assert editor.applied == []


async def test_deleting_or_moving_an_open_document_happens_on_disk(ws: Path) -> None:
    (ws / "gone.py").write_text("gone\n")
    (ws / "m.py").write_text("saved\n")
    buffers = {str(ws / "gone.py"): "gone\n", str(ws / "m.py"): "unsaved\n"}
    editor = RecordingEditor(buffers=buffers)

    outcome = await run(
        ws,
        envelope(
            "*** Delete File: gone.py",
            "*** Update File: m.py",
            "*** Move to: n.py",
            "-unsaved",
            "+moved",
        ),
        editor=editor,
    )

    assert not outcome.is_error, outcome.output
    assert not (ws / "gone.py").exists()
    assert not (ws / "m.py").exists()
    assert (ws / "n.py").read_text() == "moved\n"
    assert editor.applied == []


async def test_an_open_documents_bom_and_line_endings_reach_the_editor(ws: Path) -> None:
    target = ws / "a.py"
    target.write_bytes(b"\xef\xbb\xbfx\r\n")
    editor = RecordingEditor(buffers={str(target): "\ufeffa\r\nb\r\n"})

    outcome = await run(ws, envelope("*** Update File: a.py", "-a", "+A", "+new"), editor=editor)

    assert not outcome.is_error, outcome.output
    assert editor.applied == [(str(target), "\ufeffa\r\nb\r\n", "\ufeffA\r\nnew\r\nb\r\n")]
    assert target.read_bytes() == b"\xef\xbb\xbfx\r\n"


async def test_permission_bits_survive_update_and_move(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o750)

    outcome = await run(
        ws,
        envelope("*** Update File: run.sh", "*** Move to: bin/run2.sh", "-echo 1", "+echo 2"),
    )

    assert not outcome.is_error, outcome.output
    assert stat.S_IMODE((ws / "bin/run2.sh").stat().st_mode) == 0o750


async def test_a_refused_permission_changes_nothing(ws: Path) -> None:
    (ws / "a.py").write_text("a\n")
    before = snapshot(ws)
    ask = RecordingAsk(lambda _request: deny("no edits today", stop_turn=True))

    outcome = await run(
        ws, envelope("*** Update File: a.py", "-a", "+b", "*** Add File: n", "+n"), ask
    )

    assert outcome.is_error
    assert outcome.output == "no edits today"
    assert outcome.stop_turn
    assert snapshot(ws) == before
    assert ask.permissions() == ["edit"]


async def test_a_change_made_while_asking_that_breaks_a_hunk_stops_everything(
    ws: Path,
) -> None:
    target = ws / "a.py"
    target.write_text("a\n")

    def user_saves_meanwhile(_request: PermissionRequest) -> PermissionVerdict:
        target.write_text("z\n")
        return PermissionVerdict(allowed=True)

    outcome = await run(
        ws,
        envelope("*** Update File: a.py", "-a", "+b", "*** Add File: n.txt", "+n"),
        RecordingAsk(user_saves_meanwhile),
    )

    assert outcome.is_error
    assert outcome.output.startswith(
        "apply_patch failed: files changed after the patch was approved, and it no longer "
        "applies; no file was changed.\na.py: hunk 1 (patch line 3): could not find"
    )
    assert target.read_text() == "z\n"
    assert not (ws / "n.txt").exists()


async def test_a_change_made_while_asking_elsewhere_in_the_file_is_kept(ws: Path) -> None:
    target = ws / "a.py"
    target.write_text("a\nb\nc\nd\ne\nf\n")

    def user_saves_meanwhile(_request: PermissionRequest) -> PermissionVerdict:
        target.write_text("a\nb\nc\nd\ne\nf\nsaved by the user\n")
        return PermissionVerdict(allowed=True)

    outcome = await run(
        ws, envelope("*** Update File: a.py", "-a", "+A"), RecordingAsk(user_saves_meanwhile)
    )

    assert not outcome.is_error, outcome.output
    assert target.read_text() == "A\nb\nc\nd\ne\nf\nsaved by the user\n"


async def test_a_file_to_delete_that_changed_while_asking_is_kept(ws: Path) -> None:
    target = ws / "old.txt"
    target.write_text("old\n")

    def user_saves_meanwhile(_request: PermissionRequest) -> PermissionVerdict:
        target.write_text("precious\n")
        return PermissionVerdict(allowed=True)

    outcome = await run(
        ws, envelope("*** Delete File: old.txt"), RecordingAsk(user_saves_meanwhile)
    )

    assert outcome.is_error
    assert "old.txt changed after its deletion was approved" in outcome.output
    assert target.read_text() == "precious\n"


async def test_the_locks_are_released(ws: Path) -> None:
    (ws / "a.py").write_text("a\n")
    locks = FileLocks()

    outcome = await run(
        ws,
        envelope("*** Update File: a.py", "*** Move to: b.py", "*** Add File: c.py"),
        locks=locks,
    )

    assert not outcome.is_error, outcome.output
    assert locks.held() == ()


async def test_a_failure_midway_restores_everything(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "a.py").write_text("a\n")
    (ws / "b.py").write_text("b\n")
    (ws / "c.py").write_text("c\n")
    (ws / "m.py").write_text("m\n")
    before = snapshot(ws)
    real_unlink = os.unlink
    failed: list[str] = []

    def failing_unlink(path: str | os.PathLike[str], *args: object, **kwargs: object) -> None:
        if os.fspath(path).endswith("c.py") and not failed:
            failed.append(os.fspath(path))
            raise PermissionError(13, "Permission denied")
        real_unlink(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "unlink", failing_unlink)
    patch = envelope(
        "*** Update File: a.py",
        "-a",
        "+A",
        "*** Add File: deep/new/n.py",
        "+n",
        "*** Update File: m.py",
        "*** Move to: moved/m.py",
        "*** Update File: b.py",
        "-b",
        "+B",
        "*** Delete File: c.py",
    )

    outcome = await run(ws, patch)

    assert failed
    assert outcome.is_error
    assert outcome.output == (
        "apply_patch failed: could not remove c.py: Permission denied. "
        "Every file was restored: no file was changed."
    )
    monkeypatch.undo()
    assert snapshot(ws) == before


async def test_a_failure_while_staging_leaves_no_temp_files(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "a.py").write_text("a\n")
    before = snapshot(ws)
    real_replace = os.replace

    def failing_replace(src: str, dst: str, **kwargs: int) -> None:
        if dst.endswith("a.py"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", failing_replace)

    outcome = await run(
        ws, envelope("*** Add File: new/z.py", "+z", "*** Update File: a.py", "-a", "+A")
    )

    assert outcome.is_error
    assert "could not write a.py: No space left on device" in outcome.output
    assert "Every file was restored" in outcome.output
    monkeypatch.undo()
    assert snapshot(ws) == before


async def test_a_malformed_patch_names_its_line(ws: Path) -> None:
    outcome = await run(ws, envelope("*** Update File: a.py", "@@", "nonsense"))
    assert outcome.is_error
    assert outcome.output.startswith("Invalid patch at line 4: a hunk line starts with")


# --- paths outside the workspace ----------------------------------------------------------


@pytest.mark.parametrize(
    "lines",
    [
        ["*** Add File: ../outside/new.txt", "+x"],
        ["*** Update File: ../outside/secret.txt", "-TOP-SECRET-CONTENT", "+leaked"],
        ["*** Delete File: {outside}/secret.txt"],
        ["*** Add File: link/new.txt", "+x"],
        ["*** Update File: inside.txt", "*** Move to: ../outside/moved.txt"],
        ["*** Update File: inside.txt", "*** Move to: link/moved.txt"],
    ],
)
async def test_outside_paths_are_refused_and_nothing_is_touched(
    ws: Path, outside: Path, lines: list[str]
) -> None:
    (ws / "inside.txt").write_text("inside\n")
    (ws / "link").symlink_to(outside, target_is_directory=True)
    before = snapshot(ws.parent)
    ask = RecordingAsk(lambda r: workspace_verdict(r))
    patch = envelope("*** Add File: first.txt", "+made before the outside path?", *lines).replace(
        "{outside}", str(outside)
    )

    outcome = await run(ws, patch, ask)

    assert outcome.is_error
    assert "is outside the workspace" in outcome.output
    assert "not approved: outside the workspace" in outcome.output
    assert snapshot(ws.parent) == before
    assert ask.permissions() == ["external_directory"]


def workspace_verdict(request: PermissionRequest) -> PermissionVerdict:
    if request.permission == "external_directory":
        return deny("not approved: outside the workspace")
    return PermissionVerdict(allowed=True)


async def test_an_approved_outside_path_is_shown_absolute(ws: Path, outside: Path) -> None:
    ask = RecordingAsk()
    outcome = await run(
        ws, envelope(f"*** Update File: {outside}/secret.txt", "-TOP-SECRET-CONTENT", "+ok"), ask
    )

    assert not outcome.is_error, outcome.output
    assert ask.permissions() == ["external_directory", "edit"]
    assert ask.requests[1].patterns == (str(outside / "secret.txt"),)
    assert (outside / "secret.txt").read_text() == "ok\n"


async def test_workspace_only_gate_refuses_outside(ws: Path, outside: Path) -> None:
    outcome = await run(ws, envelope("*** Add File: ../outside/x.txt", "+x"), workspace_only)
    assert outcome.is_error
    assert not (outside / "x.txt").exists()
