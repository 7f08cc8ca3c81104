"""Central output truncation: previews within the limits, whole outputs in spill files."""

from __future__ import annotations

import os
import random
import re
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from lsp_agent.app import prune_spill_folder
from lsp_agent.core.messages import ToolCallPart
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import SearchDetails, Spill
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.tools import call_context
from lsp_agent.tools.base import ToolRunContext
from lsp_agent.tools.read import ReadTool
from lsp_agent.tools.registry import ToolRegistry
from lsp_agent.workspace.spill import SPILL_MAX_AGE, prune_spill_files, write_spill
from lsp_agent.workspace.truncation import (
    OutputLimits,
    count_lines,
    limit_output_sync,
    lost_marker,
    preview,
    spill_marker,
)

LIMITS = OutputLimits()
MARKER = re.compile(
    r"… (?P<lines>\d+) lines? \((?P<bytes>\d+) bytes?\) omitted "
    r"\(lines (?P<first>\d+)-(?P<last>\d+) of (?P<total>\d+)\); (?P<rest>[^\n]*)"
)
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and symlinks")


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmitTool:
    """A test tool: answers a fixed outcome, or raises a fixed error."""

    name = "emit"
    description = "Emits a prepared output."
    kind = "other"
    permission = PermissionKind.READ
    mutates = False
    Params = NoParams

    def __init__(self, outcome: ToolOutcome | BaseException) -> None:
        self.outcome = outcome

    def describe(self, params: NoParams, roots: Sequence[str]) -> str:
        return "Emit"

    async def run(self, params: NoParams, ctx: ToolRunContext) -> ToolOutcome:
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


def registry(
    spill_root: Path, outcome: ToolOutcome | BaseException, limits: OutputLimits = LIMITS
) -> ToolRegistry:
    return ToolRegistry(
        [ReadTool(), EmitTool(outcome)],
        editor=RecordingEditor(),
        limits=limits,
        spill_root=spill_root,
    )


def emit() -> ToolCallPart:
    return ToolCallPart(tool_call_id="call_1", name="emit", input={})


def read(**arguments: Any) -> ToolCallPart:
    return ToolCallPart(tool_call_id="call_2", name="read", input=arguments)


def numbered(count: int, width: int = 52) -> str:
    return "".join(f"{n:07d} ".ljust(width, "x") + "\n" for n in range(1, count + 1))


def within(text: str, limits: OutputLimits = LIMITS) -> bool:
    data = text.encode("utf-8")
    return len(data) <= limits.max_bytes and count_lines(data) <= limits.max_lines


def split_preview(text: str) -> tuple[str, re.Match[str], str]:
    """(head, marker, tail) of a preview."""
    found = re.search(r"(?:^|\n\n)(… [^\n]*)(?:\n\n|$)", text)
    assert found is not None, text[:200]
    marker = MARKER.fullmatch(found.group(1))
    assert marker is not None, found.group(1)
    return text[: found.start()], marker, text[found.end() :]


# --- through the real registry ------------------------------------------------------------


async def test_ten_megabytes_become_a_preview_and_a_whole_spill_file_read_can_page(
    ws: Path, spill_root: Path
) -> None:
    full = numbered(200_000)
    assert len(full.encode()) > 10_000_000
    tools = registry(
        spill_root,
        ToolOutcome(output=full, title="big", details=SearchDetails(count=1, truncated=False)),
    )

    outcome = await tools.execute(emit(), call_context(ws))

    spill = spill_root / "ses_1" / "call_1.txt"
    assert within(outcome.output)
    assert len(outcome.output.encode()) > 30_000  # a useful preview, not just the marker
    assert f"the full output is in {spill}." in outcome.output
    assert "Use read with offset/limit, or grep, on that file to see the rest." in outcome.output
    assert outcome.title == "big"
    assert not outcome.is_error
    assert outcome.details == SearchDetails(count=1, truncated=False)
    assert outcome.spill == Spill(path=str(spill), total_lines=200_000, total_bytes=len(full))
    assert spill.read_bytes() == full.encode()

    head, marker, tail = split_preview(outcome.output)
    assert full.startswith(head + "\n")
    assert full.endswith(tail)
    assert tail.endswith("0200000 " + "x" * 44 + "\n")
    first, last = int(marker["first"]), int(marker["last"])
    assert head.splitlines()[-1].startswith(f"{first - 1:07d} ")
    assert tail.splitlines()[0].startswith(f"{last + 1:07d} ")
    assert int(marker["lines"]) == last - first + 1

    page = await tools.execute(
        read(file_path=str(spill), offset=first, limit=3), call_context(ws, tool_call_id="call_2")
    )

    assert not page.is_error
    assert page.output.splitlines()[:3] == [
        f"{n}: " + f"{n:07d} ".ljust(52, "x") for n in range(first, first + 3)
    ]
    assert f"Showing lines {first}-{first + 2} of 200000" in page.output


async def test_another_session_cannot_read_the_spill_file(ws: Path, spill_root: Path) -> None:
    tools = registry(spill_root, ToolOutcome(output=numbered(5000)))
    outcome = await tools.execute(emit(), call_context(ws))
    spill = outcome.spill.path

    mine = await tools.execute(read(file_path=spill, limit=1), call_context(ws, tool_call_id="c2"))
    theirs = await tools.execute(read(file_path=spill), call_context(ws, session_id="ses_2"))

    assert mine.output.startswith("1: 0000001 ")
    assert theirs.is_error
    assert "outside the workspace" in theirs.output
    assert "0000001" not in theirs.output


@posix_only
async def test_spill_files_are_private(ws: Path, spill_root: Path) -> None:
    tools = registry(spill_root, ToolOutcome(output=numbered(5000)))

    outcome = await tools.execute(emit(), call_context(ws))

    spill = Path(outcome.spill.path)
    assert stat.S_IMODE(spill.stat().st_mode) == 0o600
    assert stat.S_IMODE(spill.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(spill_root.stat().st_mode) == 0o700
    assert os.listdir(spill.parent) == ["call_1.txt"]  # no temporary file left behind


async def test_an_output_within_the_limits_is_untouched(ws: Path, spill_root: Path) -> None:
    small = ToolOutcome(
        output=numbered(2000, width=24), details=SearchDetails(count=1, truncated=False)
    )
    assert within(small.output)

    outcome = await registry(spill_root, small).execute(emit(), call_context(ws))

    assert outcome is small
    assert not spill_root.exists()


async def test_a_huge_error_outcome_is_truncated_too(ws: Path, spill_root: Path) -> None:
    full = "error: " + numbered(10_000)
    tools = registry(spill_root, ToolOutcome(output=full, is_error=True))

    outcome = await tools.execute(emit(), call_context(ws))

    assert outcome.is_error
    assert within(outcome.output)
    assert Path(outcome.spill.path).read_text() == full


async def test_a_huge_exception_message_is_truncated_too(ws: Path, spill_root: Path) -> None:
    tools = registry(spill_root, RuntimeError("z" * 200_000))

    outcome = await tools.execute(emit(), call_context(ws))

    assert outcome.is_error
    assert within(outcome.output)
    assert outcome.output.startswith("The emit tool failed: RuntimeError: zzz")
    spilled = Path(outcome.spill.path).read_text()
    assert spilled == "The emit tool failed: RuntimeError: " + "z" * 200_000


async def test_many_short_lines_trigger_the_line_limit_alone(ws: Path, spill_root: Path) -> None:
    full = "".join(f"{n}\n" for n in range(1, 5001))
    assert len(full.encode()) < LIMITS.max_bytes
    tools = registry(spill_root, ToolOutcome(output=full))

    outcome = await tools.execute(emit(), call_context(ws))

    assert within(outcome.output)
    head, marker, tail = split_preview(outcome.output)
    head_lines, tail_lines = head.split("\n"), tail.splitlines()
    assert head_lines == [str(n) for n in range(1, len(head_lines) + 1)]
    assert tail_lines == [str(n) for n in range(5001 - len(tail_lines), 5001)]
    assert len(head_lines) + len(tail_lines) + 3 <= LIMITS.max_lines
    assert len(head_lines) > 1000
    assert marker["first"] == str(len(head_lines) + 1)
    assert marker["last"] == str(5000 - len(tail_lines))
    assert marker["total"] == "5000"
    assert outcome.spill.total_lines == 5000


@pytest.mark.parametrize("piece", ["a", "é", "€", "😀", "a€é😀"])
async def test_one_huge_line_triggers_the_byte_limit_and_is_cut_safely(
    ws: Path, spill_root: Path, piece: str
) -> None:
    full = piece * (200_000 // len(piece.encode()))
    tools = registry(spill_root, ToolOutcome(output=full))

    outcome = await tools.execute(emit(), call_context(ws))

    assert within(outcome.output)
    assert "\ufffd" not in outcome.output
    head, marker, tail = split_preview(outcome.output)
    assert full.startswith(head)
    assert full.endswith(tail)
    assert len(head.encode()) > LIMITS.max_bytes // 2
    assert len(tail.encode()) > LIMITS.max_bytes // 10
    assert (marker["lines"], marker["first"], marker["last"], marker["total"]) == (
        "1",
        "1",
        "1",
        "1",
    )
    assert int(marker["bytes"]) == len(full.encode()) - len(head.encode()) - len(tail.encode())
    assert Path(outcome.spill.path).read_text() == full


async def test_when_the_spill_cannot_be_written_the_preview_says_so(ws: Path) -> None:
    blocker = ws.parent / "not-a-folder"
    blocker.write_text("")
    full = numbered(10_000)
    tools = registry(blocker / "tool-output", ToolOutcome(output=full))

    outcome = await tools.execute(emit(), call_context(ws))

    assert within(outcome.output)
    _, marker, _ = split_preview(outcome.output)
    assert marker["rest"].startswith("the full output could not be saved (")
    assert outcome.spill is not None
    assert outcome.spill.path is None
    assert outcome.spill.total_lines == 10_000
    assert outcome.spill.error


async def test_a_reused_call_id_never_overwrites_an_earlier_spill(
    ws: Path, spill_root: Path
) -> None:
    first_output, second_output = numbered(5000), numbered(6000)

    first = await registry(spill_root, ToolOutcome(output=first_output)).execute(
        emit(), call_context(ws)
    )
    second = await registry(spill_root, ToolOutcome(output=second_output)).execute(
        emit(), call_context(ws)
    )

    assert first.spill.path == str(spill_root / "ses_1" / "call_1.txt")
    assert second.spill.path == str(spill_root / "ses_1" / "call_1-2.txt")
    assert Path(first.spill.path).read_text() == first_output
    assert Path(second.spill.path).read_text() == second_output


@pytest.mark.parametrize(
    ("session", "call"), [("../../escape", "c"), ("ses", "../../x"), ("a/b", "/etc/x"), (".", "..")]
)
def test_odd_ids_never_leave_the_spill_root(tmp_path: Path, session: str, call: str) -> None:
    root = tmp_path / "tool-output"

    path = write_spill(root, session, call, b"data")

    assert path.read_bytes() == b"data"
    assert path.parent.parent == root
    assert path.resolve().is_relative_to(root.resolve())


# --- the preview itself -------------------------------------------------------------------


def random_text(rng: random.Random, limits: OutputLimits) -> str:
    alphabet = ["a", "b", " ", "é", "€", "😀", "\t", "x"]
    lines = []
    for _ in range(rng.choice([1, 2, 5, 50, limits.max_lines + rng.randint(1, 300)])):
        size = rng.choice([0, 1, 3, 20, 80, limits.max_bytes // 3, limits.max_bytes * 2])
        lines.append("".join(rng.choices(alphabet, k=rng.randint(0, size))))
    return "\n".join(lines) + rng.choice(["", "\n"])


def test_random_previews_stay_within_the_limits_and_account_for_everything() -> None:
    rng = random.Random(20240607)
    checked = 0
    while checked < 300:
        limits = OutputLimits(max_lines=rng.randint(8, 120), max_bytes=rng.randint(400, 4000))
        full = random_text(rng, limits)
        data = full.encode()
        if within(full, limits):
            continue
        checked += 1

        text = preview(data, limits, spill_marker("/data/tool-output/ses_1/call_1.txt"))

        assert within(text, limits), (limits, len(text.encode()), count_lines(text.encode()))
        head, marker, tail = split_preview(text)
        assert "\ufffd" not in text
        assert full.startswith(head)
        assert full.endswith(tail)
        head_b, tail_b = head.encode(), tail.encode()
        total_lines = count_lines(data)
        first, last = int(marker["first"]), int(marker["last"])
        head_whole, tail_whole = first - 1, total_lines - last
        # The head's last line is whole exactly when a newline follows it in the output.
        head_cut_at_newline = head_whole > 0 and head_whole == head.count("\n") + 1
        shown = len(head_b) + head_cut_at_newline + len(tail_b)
        assert int(marker["total"]) == total_lines
        assert int(marker["lines"]) == last - first + 1
        assert int(marker["bytes"]) == len(data) - shown
        assert shown <= len(data)
        assert tail  # the tail always gets a share of the budget
        tail_start = len(data) - len(tail_b)
        tail_at_line_start = not tail or tail_start == 0 or data[tail_start - 1] == ord("\n")
        assert tail_whole == len(tail.splitlines()) - (0 if tail_at_line_start else 1)


def test_limits_too_small_for_the_marker_give_the_marker_alone() -> None:
    data = numbered(100).encode()

    text = preview(data, OutputLimits(max_lines=2, max_bytes=50), lost_marker("disk full"))

    assert text == (
        "… 100 lines (5300 bytes) omitted (lines 1-100 of 100); "
        "the full output could not be saved (disk full)."
    )


def test_limit_output_sync_keeps_small_outputs_and_saves_large_ones(tmp_path: Path) -> None:
    saved: list[bytes] = []

    def save(data: bytes) -> Path:
        saved.append(data)
        return tmp_path / "x.txt"

    small = ToolOutcome(output="hello")
    large = ToolOutcome(output="y" * 60_000)

    assert limit_output_sync(small, LIMITS, save) is small
    limited = limit_output_sync(large, LIMITS, save)
    assert saved == [b"y" * 60_000]
    assert limited.spill.path == str(tmp_path / "x.txt")
    assert within(limited.output)


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_lines"):
        OutputLimits(max_lines=0)
    with pytest.raises(ValueError, match="max_bytes"):
        OutputLimits(max_bytes=-1)


# --- pruning ------------------------------------------------------------------------------

NOW = 1_800_000_000.0
OLD = NOW - SPILL_MAX_AGE - 60
NEW = NOW - 60


def touch(path: Path, when: float, content: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    os.utime(path, (when, when))
    return path


@posix_only
def test_prune_deletes_old_files_keeps_new_ones_and_ignores_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "tool-output"
    outside = tmp_path / "outside"
    old_gone = touch(root / "ses_old" / "call_1.txt", OLD)
    temp_gone = touch(root / "ses_old" / ".call_2.abc.tmp", OLD)
    mixed_old = touch(root / "ses_mixed" / "call_1.txt", OLD)
    mixed_new = touch(root / "ses_mixed" / "call_2.txt", NEW)
    (root / "ses_empty_new").mkdir()
    os.utime(root / "ses_empty_new", (NEW, NEW))
    (root / "ses_empty_old").mkdir()
    os.utime(root / "ses_empty_old", (OLD, OLD))
    target = touch(outside / "precious.txt", OLD)
    touch(outside / "deep" / "precious.txt", OLD)
    link = root / "ses_links" / "link.txt"
    link.parent.mkdir()
    link.symlink_to(target)
    os.utime(link, (OLD, OLD), follow_symlinks=False)
    (root / "ses_elsewhere").symlink_to(outside / "deep", target_is_directory=True)
    stray = touch(root / "stray.txt", OLD)
    os.utime(root / "ses_old", (OLD, OLD))

    removed = prune_spill_files(root, now=NOW)

    assert removed == 3
    assert not old_gone.exists()
    assert not temp_gone.exists()
    assert not (root / "ses_old").exists()
    assert not mixed_old.exists()
    assert mixed_new.exists()
    assert (root / "ses_empty_new").is_dir()
    assert not (root / "ses_empty_old").exists()
    assert link.is_symlink()
    assert target.read_text() == "x"
    assert (outside / "deep" / "precious.txt").exists()
    assert (root / "ses_elsewhere").is_symlink()
    assert stray.exists()


def test_prune_of_a_missing_folder_is_nothing_to_do(tmp_path: Path) -> None:
    assert prune_spill_files(tmp_path / "nowhere", now=NOW) == 0


async def test_start_up_pruning_never_raises(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "tool-output"
    not_a_folder.write_text("")
    await prune_spill_folder(not_a_folder, NOW)

    root = tmp_path / "data" / "tool-output"
    old = touch(root / "ses_1" / "call_1.txt", OLD)
    await prune_spill_folder(root, NOW)
    assert not old.exists()
