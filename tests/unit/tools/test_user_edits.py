"""The user's own version of a proposal (``modifiedContent``): write, edit and apply_patch
apply the user's text instead of the model's and tell the model the difference."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lsp_agent.core.permission.rules import PermissionRequest, PermissionVerdict
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import RecordingAsk
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.apply_patch import ApplyPatchParams, ApplyPatchTool
from lsp_agent.tools.edit import EditParams, EditTool
from lsp_agent.tools.write import WriteParams, WriteTool
from lsp_agent.workspace.files import FileLocks

NOTE = "The user modified your proposed change to"


def users(texts: dict[Path, str]) -> Callable[[PermissionRequest], PermissionVerdict]:
    """An allow carrying the user's texts (what the gate hands on: path → text)."""
    return lambda _request: PermissionVerdict(
        allowed=True, modified={str(path): text for path, text in texts.items()}
    )


async def write(
    ws: Path, name: str, content: str, ask: RecordingAsk, editor: RecordingEditor | None = None
) -> ToolOutcome:
    ctx = tool_context(ws, ask=ask, editor=editor)
    return await WriteTool(FileLocks()).run(WriteParams(file_path=name, content=content), ctx)


async def edit(
    ws: Path,
    name: str,
    old: str,
    new: str,
    ask: RecordingAsk,
    editor: RecordingEditor | None = None,
) -> ToolOutcome:
    ctx = tool_context(ws, ask=ask, editor=editor)
    params = EditParams(file_path=name, old_string=old, new_string=new)
    return await EditTool(FileLocks()).run(params, ctx)


async def patch(ws: Path, text: str, ask: RecordingAsk) -> ToolOutcome:
    ctx = tool_context(ws, ask=ask)
    return await ApplyPatchTool(FileLocks()).run(ApplyPatchParams(patch=text), ctx)


async def test_write_applies_the_users_text_and_shows_the_model_the_difference(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("x = 1\n")
    ask = RecordingAsk(users({path: "x = 1\ny = 'user'\n"}))

    outcome = await write(ws, "a.py", "x = 1\ny = 'model'\n", ask)

    assert not outcome.is_error
    assert path.read_text() == "x = 1\ny = 'user'\n"
    assert f"{NOTE} a.py before it was applied" in outcome.output
    assert "--- a.py (your proposal)\n+++ a.py (applied)\n" in outcome.output
    assert "-y = 'model'\n+y = 'user'\n" in outcome.output
    assert "Diff: +1 -0 lines" in outcome.output  # what landed, against the file before
    assert list(outcome.details.modified) == ["a.py"]
    assert "+y = 'user'" in outcome.details.patch
    # the ask showed the model's proposal
    [asked] = ask.requests
    assert asked.previews[0].proposed_text == "x = 1\ny = 'model'\n"


async def test_write_to_an_open_buffer_puts_the_users_text_in_the_buffer(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("x = 1\n")
    editor = RecordingEditor(buffers={str(path): "x = 1\n"})
    ask = RecordingAsk(users({path: "x = 'user'\n"}))

    outcome = await write(ws, "a.py", "x = 'model'\n", ask, editor)

    assert not outcome.is_error
    assert editor.applied == [(str(path), "x = 1\n", "x = 'user'\n")]
    assert path.read_text() == "x = 1\n"  # the disk is the user's to save
    assert "-x = 'model'\n+x = 'user'\n" in outcome.output


async def test_the_proposal_sent_back_unchanged_is_no_modification(ws: Path) -> None:
    path = ws / "a.py"
    path.write_bytes(b"\xef\xbb\xbfx = 1\r\n")
    # the editor's buffer form: a BOM in front, LF endings
    ask = RecordingAsk(users({path: "\ufeffx = 2\n"}))

    outcome = await edit(ws, "a.py", "x = 1", "x = 2", ask)

    assert not outcome.is_error
    assert path.read_bytes() == b"\xef\xbb\xbfx = 2\r\n"
    assert NOTE not in outcome.output
    assert outcome.details.modified == ()


async def test_edit_applies_the_users_text_with_the_files_bom_and_line_endings(ws: Path) -> None:
    path = ws / "a.py"
    path.write_bytes(b"\xef\xbb\xbfa = 1\r\nb = 1\r\n")
    ask = RecordingAsk(users({path: "a = 2\nb = 1\nc = 'user'\n"}))

    outcome = await edit(ws, "a.py", "a = 1", "a = 2", ask)

    assert not outcome.is_error
    assert path.read_bytes() == b"\xef\xbb\xbfa = 2\r\nb = 1\r\nc = 'user'\r\n"
    assert f"{NOTE} a.py" in outcome.output
    assert "+c = 'user'\n" in outcome.output


async def test_edit_dropping_the_models_change_entirely_is_partial_acceptance(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("a = 1\nkeep = 1\nb = 1\n")
    ask = RecordingAsk(users({path: "a = 1\nkeep = 1\nb = 1\n# user\n"}))

    outcome = await edit(ws, "a.py", "a = 1", "a = 2", ask)

    assert path.read_text() == "a = 1\nkeep = 1\nb = 1\n# user\n"
    assert "-a = 2\n+a = 1\n" in outcome.output  # the model's change the user took out


async def test_edit_of_a_file_changed_after_the_ask_writes_nothing(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("a = 1\nb = 1\n")

    def answer(request: PermissionRequest) -> PermissionVerdict:
        path.write_text("a = 1\nb = 'meanwhile'\n")  # someone changed it while asked
        return users({path: "a = 'user'\nb = 1\n"})(request)

    outcome = await edit(ws, "a.py", "a = 1", "a = 2", RecordingAsk(answer))

    assert outcome.is_error
    assert "changed after the edit was approved" in outcome.output
    assert "user's version" in outcome.output
    assert path.read_text() == "a = 1\nb = 'meanwhile'\n"


async def test_a_text_for_another_file_is_ignored_by_the_tool(ws: Path) -> None:
    path, other = ws / "a.py", ws / "b.py"
    path.write_text("a = 1\n")
    other.write_text("b = 1\n")
    ask = RecordingAsk(users({other: "b = 'user'\n"}))

    outcome = await edit(ws, "a.py", "a = 1", "a = 2", ask)

    assert not outcome.is_error
    assert path.read_text() == "a = 2\n"
    assert other.read_text() == "b = 1\n"
    assert NOTE not in outcome.output


async def test_apply_patch_applies_the_users_text_for_one_file_and_the_patch_for_another(
    ws: Path,
) -> None:
    one, two = ws / "one.py", ws / "two.py"
    one.write_text("x = 1\nmid\ny = 1\n")
    two.write_text("z = 1\n")
    text = (
        "*** Begin Patch\n*** Update File: one.py\n@@\n-x = 1\n+x = 2\n mid\n-y = 1\n+y = 2\n"
        "*** Update File: two.py\n@@\n-z = 1\n+z = 2\n"
        "*** Add File: new.py\n+n = 'model'\n*** End Patch\n"
    )
    # the user kept only the first hunk of one.py and rewrote the new file
    ask = RecordingAsk(users({one: "x = 2\nmid\ny = 1\n", ws / "new.py": "n = 'user'\n"}))

    outcome = await patch(ws, text, ask)

    assert not outcome.is_error, outcome.output
    assert one.read_text() == "x = 2\nmid\ny = 1\n"
    assert two.read_text() == "z = 2\n"
    assert (ws / "new.py").read_text() == "n = 'user'\n"
    assert f"{NOTE} one.py, new.py before it was applied" in outcome.output
    assert "-y = 2\n+y = 1\n" in outcome.output
    assert "-n = 'model'\n+n = 'user'\n" in outcome.output
    assert "+y = 2" not in outcome.details.patch
    assert list(outcome.details.modified) == ["one.py", "new.py"]


async def test_apply_patch_of_a_file_changed_after_the_ask_changes_nothing(ws: Path) -> None:
    one = ws / "one.py"
    one.write_text("x = 1\nmid\ny = 1\n")
    text = "*** Begin Patch\n*** Update File: one.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"

    def answer(request: PermissionRequest) -> PermissionVerdict:
        one.write_text("x = 1\nmid\ny = 'meanwhile'\n")
        return users({one: "x = 'user'\nmid\ny = 1\n"})(request)

    outcome = await patch(ws, text, RecordingAsk(answer))

    assert outcome.is_error
    assert "changed after the user's version was approved" in outcome.output
    assert one.read_text() == "x = 1\nmid\ny = 'meanwhile'\n"


async def test_a_user_text_that_is_not_unicode_is_refused(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("a = 1\n")
    ask = RecordingAsk(users({path: "a = '\ud800'\n"}))

    outcome = await write(ws, "a.py", "a = 2\n", ask)

    assert outcome.is_error
    assert "not valid Unicode" in outcome.output
    assert path.read_text() == "a = 1\n"
