"""The user's own version of a proposed change (protocol.md §4, ``modifiedContent``).

An allowed ``edit`` ask may carry, per file, the whole text the user made of the proposal in
the editor's diff view (a line rewritten, a hunk dropped: partial acceptance is the same
thing). ``write``, ``edit`` and ``apply_patch`` then apply that text instead of their own,
through their usual commit (the editor for an open buffer, an atomic write otherwise), and
the model reads that the user changed its edit, with the diff from its proposal to what was
applied, so it neither redoes nor undoes what the user chose.

The text from the editor is in buffer form: a leading U+FEFF is dropped (whether the file
has a BOM stays the file's), and its line endings are made the proposal's when the editor
gave the other kind.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from lsp_agent.core.permission.rules import PermissionVerdict
from lsp_agent.core.tool_details import FileChangeDetails, PatchDetails, ToolDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.workspace.files import BOM, TextFile, detect_newline, encode_text, unified_diff

__all__ = ["INVALID_TEXT", "UserVersion", "same_file", "user_version", "with_user_edits"]

INVALID_TEXT = (
    "The user's version of {display} is not valid Unicode text (it has a lone surrogate); "
    "nothing was written."
)


@attrs.frozen(kw_only=True)
class UserVersion:
    """What the user made of the proposal for one file, ready to commit."""

    display: str
    proposed: str
    """The tool's own text (no BOM, line endings as it would have written them)."""
    text: str
    """The user's text in the same form: what is applied."""
    data: bytes
    """``text`` encoded for the disk."""


def user_version(
    verdict: PermissionVerdict, path: str, *, proposed: str, bom: bool, display: str
) -> UserVersion | str | None:
    """The user's version of ``path`` (absolute, as the ask's previews name it); None when
    the user left the proposal as it was; a message for the model when it cannot be
    written. ``bom``: the file gets a BOM on disk."""
    given = verdict.modified.get(path)
    if given is None:
        return None
    text = given.removeprefix(BOM)
    if detect_newline(proposed) == "\r\n":
        if "\r\n" not in text:
            text = text.replace("\n", "\r\n")
    elif "\r\n" in text and "\r\n" not in proposed:
        text = text.replace("\r\n", "\n")
    if text == proposed:
        return None
    try:
        data = encode_text(text, bom=bom)
    except UnicodeEncodeError:
        return INVALID_TEXT.format(display=display)
    return UserVersion(display=display, proposed=proposed, text=text, data=data)


def same_file(now: TextFile | None, then: TextFile | None) -> bool:
    """The file still holds what it held when the change was proposed (text and BOM)."""
    if now is None or then is None:
        return now is then
    return now.text == then.text and now.bom == then.bom


def with_user_edits(outcome: ToolOutcome, versions: Sequence[UserVersion]) -> ToolOutcome:
    """``outcome`` telling the model that the user changed its proposal for ``versions``:
    the unified diff from its proposal to the text applied (the central output limit
    applies to it as to any output); the details' ``modified`` lists the files."""
    if not versions:
        return outcome
    names = ", ".join(v.display for v in versions)
    diffs = "".join(
        unified_diff(
            v.proposed, v.text, f"{v.display} (your proposal)", new_label=f"{v.display} (applied)"
        ).patch
        for v in versions
    )
    note = (
        f"The user modified your proposed change to {names} before it was applied: the file "
        "now holds the user's version, not yours. Take it as the user's decision and do not "
        "redo what they changed. The diff from your proposal to what was applied:\n"
        f"{diffs}"
    )
    return attrs.evolve(
        outcome,
        output=f"{outcome.output}\n\n{note}",
        details=_with_modified(outcome.details, tuple(v.display for v in versions)),
    )


def _with_modified(details: ToolDetails | None, modified: tuple[str, ...]) -> ToolDetails | None:
    """The change's details, naming the files the person changed before it was applied."""
    if isinstance(details, FileChangeDetails | PatchDetails):
        return attrs.evolve(details, modified=modified)
    return details
