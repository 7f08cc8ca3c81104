"""Issue 31, point 7: every write goes through the wall at the moment of writing.

A folder the model (or a racing session) swaps for a symlink to ``$HOME`` after a path was
checked must neither let a write escape nor break snapshots, review or revert. Each test
runs with a ``$HOME`` holding ``.profile``, so an escape is visible; variants swap a folder
right under the workspace, a middle folder and the file itself, through every tool that
writes, the review's undo, the snapshot restore and a thread flipping a folder while writes
run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.app import AgentInputs, load_agent
from lsp_agent.core.permission.rules import ALLOWED, PermissionRequest, PermissionVerdict
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.system import beneath
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.fake_llm import running_fake_llm
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.apply_patch import ApplyPatchParams, ApplyPatchTool
from lsp_agent.tools.edit import EditParams, EditTool
from lsp_agent.tools.write import WriteParams, WriteTool
from lsp_agent.workspace.disk_texts import DiskTexts
from lsp_agent.workspace.files import FileLocks, link_in_the_way, write_atomic
from lsp_agent.workspace.temp_files import TempJournal

KEY = "sk-symlink-races-0123456789"
PROFILE = "export PATH=$HOME/bin:$PATH\n"
RACE_WRITES = 400
RUN_TIMEOUT = 180.0


@pytest.fixture
def home(isolated_home: Path) -> Path:
    """The test's ``$HOME`` with a ``.profile`` (asserted intact) and a ``.ssh`` folder."""
    (isolated_home / ".profile").write_text(PROFILE)
    (isolated_home / ".ssh").mkdir()
    return isolated_home


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    return root


def home_untouched(home: Path) -> None:
    assert (home / ".profile").read_text() == PROFILE
    assert sorted(p.name for p in home.iterdir()) == [".config", ".profile", ".ssh"]


def swap_for_link(folder: Path, target: Path) -> None:
    """What the model's ``bash`` can do: move a folder aside, put a link in its place."""
    folder.rename(folder.with_name(folder.name + ".real"))
    folder.symlink_to(target)


def swapping_ask(swap: Callable[[], None]) -> Callable[[PermissionRequest], Any]:
    """A permission answer that allows, after making the swap (between check and write)."""

    async def ask(request: PermissionRequest) -> PermissionVerdict:
        swap()
        return ALLOWED

    return ask


async def run_write(ws: Path, path: str, content: str, swap: Callable[[], None]) -> ToolOutcome:
    ctx = tool_context(ws, ask=swapping_ask(swap))
    return await WriteTool(FileLocks()).run(WriteParams(file_path=path, content=content), ctx)


async def run_edit(
    ws: Path, path: str, old: str, new: str, swap: Callable[[], None]
) -> ToolOutcome:
    ctx = tool_context(ws, ask=swapping_ask(swap))
    params = EditParams(file_path=path, old_string=old, new_string=new)
    return await EditTool(FileLocks()).run(params, ctx)


async def run_patch(ws: Path, patch: str, swap: Callable[[], None]) -> ToolOutcome:
    ctx = tool_context(ws, ask=swapping_ask(swap))
    return await ApplyPatchTool(FileLocks()).run(ApplyPatchParams(patch=patch), ctx)


def envelope(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


# --- the file tools: swapped between the check and the write ----------------------------------


@pytest.mark.parametrize("depth", ["sub", "sub/deeper"])
async def test_write_into_a_folder_swapped_after_approval_never_lands_in_home(
    ws: Path, home: Path, depth: str
) -> None:
    (ws / depth).mkdir(parents=True)
    folder = ws / depth

    outcome = await run_write(
        ws, f"{depth}/new.txt", "pwned\n", lambda: swap_for_link(folder, home)
    )

    assert outcome.is_error
    assert "symbolic link" in outcome.output
    assert not (home / "new.txt").exists()
    home_untouched(home)


async def test_write_over_a_file_swapped_for_a_link_replaces_nothing_outside(
    ws: Path, home: Path
) -> None:
    (ws / "sub").mkdir()
    target = ws / "sub" / "notes.txt"
    target.write_text("old\n")

    def swap() -> None:
        target.unlink()
        target.symlink_to(home / ".profile")

    outcome = await run_write(ws, "sub/notes.txt", "pwned\n", swap)

    assert outcome.is_error
    home_untouched(home)


async def test_edit_through_a_folder_swapped_after_approval_never_changes_home(
    ws: Path, home: Path
) -> None:
    (ws / "sub").mkdir()
    (ws / "sub" / ".profile").write_text(PROFILE)

    outcome = await run_edit(
        ws, "sub/.profile", "$HOME/bin", "/tmp/evil", lambda: swap_for_link(ws / "sub", home)
    )

    assert outcome.is_error
    home_untouched(home)


@pytest.mark.parametrize(
    "patch",
    [
        envelope("*** Add File: sub/deep/new.py", "+x = 1"),
        envelope("*** Add File: sub/new.py", "+x = 1"),
        envelope("*** Update File: top.py", "*** Move to: sub/moved.py", "-x", "+y"),
        envelope("*** Delete File: sub/.profile"),
    ],
    ids=["add-deep", "add", "move-into", "delete"],
)
async def test_apply_patch_into_a_folder_swapped_after_approval_never_touches_home(
    ws: Path, home: Path, patch: str
) -> None:
    (ws / "sub" / "deep").mkdir(parents=True)
    (ws / "sub" / ".profile").write_text(PROFILE)
    (ws / "top.py").write_text("x\n")

    outcome = await run_patch(ws, patch, lambda: swap_for_link(ws / "sub", home))

    assert outcome.is_error
    home_untouched(home)
    assert (ws / "top.py").read_text() == "x\n"  # all or nothing: the rest was restored


# --- a racing thread flips a folder while writes run ------------------------------------------


def flipping(folder: Path, target: Path, stop: threading.Event) -> None:
    """Flip ``folder`` between a real folder and a link to ``target`` until ``stop``. A writer
    that makes the missing folder while the link is away gets to keep that one (moved
    aside as ``<name>.made-N``): the race goes on with the real folder."""
    aside = folder.with_name(folder.name + ".real")
    made = 0
    while not stop.is_set():
        os.rename(folder, aside)
        try:
            os.symlink(target, folder)
        except FileExistsError:
            pass  # a writer made the folder again meanwhile
        else:
            os.unlink(folder)
        while True:
            try:
                os.rename(aside, folder)
                break
            except OSError:
                made += 1
                with contextlib.suppress(FileNotFoundError):
                    os.rename(folder, folder.with_name(f"{folder.name}.made-{made}"))


def written_in(ws: Path, pattern: str) -> int:
    """Files named like ``pattern`` in the workspace's real folders (no link followed)."""
    return sum(
        1 for folder, _dirs, files in os.walk(ws) for name in files if Path(name).match(pattern)
    )


def test_writes_racing_a_folder_flip_never_land_outside(ws: Path, home: Path) -> None:
    folder = ws / "sub"
    folder.mkdir()
    stop = threading.Event()
    flipper = threading.Thread(target=flipping, args=(folder, home, stop), daemon=True)
    flipper.start()
    written = refused = 0
    try:
        for n in range(RACE_WRITES):
            try:
                write_atomic(str(folder / f"f{n}.txt"), b"approved\n")
                written += 1
            except OSError:
                refused += 1
    finally:
        stop.set()
        flipper.join(timeout=30)
    assert not flipper.is_alive()
    assert written + refused == RACE_WRITES
    assert written > 0, "the flip never let a write through at all: the race was not run"
    assert sorted(p.name for p in home.iterdir()) == [".config", ".profile", ".ssh"]
    assert written_in(ws, "f*.txt") == written


async def test_review_file_texts_racing_a_folder_flip_never_act_outside(
    ws: Path, home: Path
) -> None:
    folder = ws / "sub"
    folder.mkdir()
    (home / "victim.txt").write_text("keep\n")
    texts = DiskTexts()
    stop = threading.Event()
    flipper = threading.Thread(target=flipping, args=(folder, home, stop), daemon=True)
    flipper.start()
    try:
        for n in range(RACE_WRITES // 4):
            for action in (
                texts.write_text(str(folder / f"r{n}.txt"), "undone\n"),
                texts.remove(str(folder / "victim.txt")),
            ):
                with contextlib.suppress(OSError):
                    await action
    finally:
        stop.set()
        flipper.join(timeout=30)
    assert (home / "victim.txt").read_text() == "keep\n"
    assert not list(home.glob("r*.txt"))


# --- the primitives: a link anywhere on the way is refused --------------------------------------


def test_every_operation_refuses_a_link_on_the_way(ws: Path, home: Path) -> None:
    (ws / "sub").symlink_to(home)
    inside = str(ws / "sub" / ".profile")
    operations: list[Callable[[], object]] = [
        lambda: beneath.write_atomic(inside, b"x"),
        lambda: beneath.unlink(inside),
        lambda: beneath.read_bytes(inside),
        lambda: beneath.lstat(inside),
        lambda: beneath.mkdir(str(ws / "sub" / "made")),
        lambda: beneath.symlink("/etc/passwd", str(ws / "sub" / "link")),
        lambda: beneath.replace(str(ws / "a"), inside),
    ]
    (ws / "a").write_text("a\n")
    for operation in operations:
        with pytest.raises(beneath.LinkInTheWay):
            operation()
    home_untouched(home)


# --- snapshots, review and revert after a swap (the real CLI and the real app) ----------------


def cli_env(server_url: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": server_url, "ANTHROPIC_API_KEY": KEY}


def run_turn(ws: Path, script: list[dict[str, Any]], *extra: str) -> list[dict[str, Any]]:
    with running_fake_llm(script) as server:
        result = run_cli(
            "run", "--yes", "--json", "--model", "anthropic/claude-test", *extra, "go",
            cwd=ws, env=cli_env(server.anthropic_base_url), timeout=RUN_TIMEOUT,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def write_call(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write", "input": {"file_path": path, "content": content}}]}


def test_snapshots_and_revert_survive_a_folder_swapped_for_a_link(ws: Path, home: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "sub").mkdir()
    (ws / "sub" / "kept.txt").write_text("kept\n")
    first = run_turn(ws, [write_call("sub/a.txt", "agent\n"), {"text": "done"}])
    session = first[0]["sessionId"]
    swap_for_link(ws / "sub", home)

    second = run_turn(ws, [write_call("top.txt", "top\n"), {"text": "done"}], "--session", session)

    checkpoints = [
        u["update"] for u in second if u["update"]["sessionUpdate"] == "checkpoint_update"
    ]
    assert checkpoints, "no checkpoint was recorded after the swap"
    assert [f["path"] for f in checkpoints[-1]["files"]] == ["top.txt"]
    message = _first_assistant(first)  # revert to before the first prompt
    staged = run_cli("sessions", "revert", session, "--message", message, "--force", cwd=ws)
    assert staged.returncode == 0, staged.stderr
    done = run_cli("sessions", "revert", session, "--commit", cwd=ws)
    assert done.returncode == 0, done.stderr
    home_untouched(home)
    assert not (ws / "top.txt").exists()
    assert (ws / "sub.real" / "kept.txt").read_text() == "kept\n"


def _first_assistant(updates: list[dict[str, Any]]) -> str:
    for update in updates:
        message = update["update"].get("messageId")
        if isinstance(message, str):
            return message
    raise AssertionError("no assistant message in the run")


async def test_review_undo_all_after_a_swap_never_deletes_in_home(ws: Path, home: Path) -> None:
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q"], cwd=ws, check=True)
    (ws / "sub").mkdir()
    updates = await asyncio.to_thread(
        run_turn, ws, [write_call("sub/.profile", PROFILE), {"text": "done"}]
    )
    session = updates[0]["sessionId"]
    swap_for_link(ws / "sub", home)  # ~/.profile now reads exactly as the agent's new file

    inputs = AgentInputs(
        workspace=ws,
        env={**os.environ, "ANTHROPIC_API_KEY": KEY},
        init_options={"title": {"enabled": False}, "model": "anthropic/claude-test"},
    )
    app = await load_agent(inputs, editor=RecordingEditor())
    try:
        listed = await app.sessions.review_list(session)
        result = await app.sessions.review_resolve(session, "undo")
    finally:
        await app.aclose()

    assert [f.path for f in listed] == [str(ws / "sub" / ".profile")]
    assert result.resolved == ()
    home_untouched(home)


def test_recovery_never_sweeps_through_a_folder_swapped_for_a_link(
    ws: Path, home: Path, tmp_path: Path
) -> None:
    journals = tmp_path / "journals"
    journals.mkdir()
    dead_pid, ticks = 2**22 + 77, 12345
    (ws / "sub").mkdir()
    (journals / f"{dead_pid}-{ticks}").write_text(json.dumps(str(ws / "sub")) + "\n")
    bait = home / f".profile.lsp-agent-{dead_pid}-{ticks}-0123abcd.tmp"
    bait.write_text("not the agent's\n")
    swap_for_link(ws / "sub", home)

    removed = TempJournal(journals).sweep(alive=lambda _owner: False)

    assert removed == []
    assert bait.read_text() == "not the agent's\n"


def test_an_edit_is_not_sent_to_the_editor_through_a_swapped_folder(ws: Path, home: Path) -> None:
    (ws / "sub").mkdir()
    (ws / "sub" / "a.txt").write_text("a\n")
    assert link_in_the_way(str(ws / "sub" / "a.txt")) is None
    swap_for_link(ws / "sub", home)
    assert link_in_the_way(str(ws / "sub" / ".profile")) is not None
    (ws / "leaf").symlink_to(home / ".profile")
    assert link_in_the_way(str(ws / "leaf")) is not None
