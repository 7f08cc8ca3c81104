"""Issue 31 §1: the agent's own git never runs the project's code.

A repository whose configuration (or a file it includes, or its attributes) asks git to run
a program — fsmonitor, hooks, textconv and diff drivers, clean/smudge/process filters, the
pager, editors, ssh through a promisor remote, credential helpers, gpg — is snapshotted,
compared, read back, restored and ``#diff``-ed; none of those programs may run, and each
result is still right. git's environment holds no key of ours, and a FIFO where git
expects a file never hangs anything.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.context_sources import _git_summary
from lsp_agent.core.attachments import AttachScope
from lsp_agent.mentions import PromptExpansion
from lsp_agent.snapshots.git_shadow import GitShadowSnapshots
from lsp_agent.snapshots.shadow_repo import SnapshotError
from lsp_agent.system.git_process import GitResult, run_git
from lsp_agent.testing.editor import RecordingEditor
from tests.support.hostile_repo import (
    MECHANISMS,
    git,
    hook_script,
    hostile_repository,
    markers_left,
)

KEY = "sk-ant-api03-" + "k" * 40
WAIT = 60.0
"""Generous: a hang shows as this wait running out, never a slow machine."""


@pytest.fixture
def ws(workspace: Path) -> Path:
    return Path(os.path.realpath(workspace))


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    return tmp_path / "markers"


async def diff_mention(ws: Path) -> str:
    scope = AttachScope(folder=str(ws), roots=(str(ws),), focus=None)
    [attached] = await PromptExpansion(RecordingEditor()).expand(
        [{"type": "mention", "name": "diff"}], scope
    )
    return str(attached["text"])


async def every_git_operation(ws: Path, data: Path) -> dict[str, Any]:
    """Snapshot, change, snapshot, compare, read back, restore, ``#diff``: what they gave."""
    snapshots = GitShadowSnapshots(data)
    first = await snapshots.track(ws)
    (ws / "b.txt").write_text("bee, changed by the agent\n")
    (ws / "d.txt").write_text("new\n")
    second = await snapshots.track(ws)
    changes = await snapshots.diff(ws, first, second)
    patch = await snapshots.patch(ws, first, second)
    old_b = await snapshots.read(ws, first, "b.txt")
    restored = await snapshots.restore(ws, first)
    mention = await diff_mention(ws)
    return {
        "changes": sorted(c.path for c in changes),
        "patch": patch,
        "old_b": old_b,
        "restored": restored,
        "diff": mention,
    }


@pytest.mark.parametrize("mechanism", sorted(MECHANISMS))
async def test_no_program_of_the_repository_runs_and_the_results_are_right(
    ws: Path, markers: Path, tmp_path: Path, mechanism: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    hostile_repository(ws, markers, [mechanism])

    got = await every_git_operation(ws, tmp_path / "data")

    assert markers_left(markers) == {}
    assert got["changes"] == ["b.txt", "d.txt"]
    assert "+bee, changed by the agent" in got["patch"]
    assert got["old_b"] == "bee\n"
    assert got["restored"] == ["b.txt", "d.txt"]
    assert (ws / "b.txt").read_text() == "bee\n"
    assert "-two\n+two, changed" in got["diff"], got["diff"]


async def test_every_mechanism_at_once_runs_nothing(
    ws: Path, markers: Path, tmp_path: Path
) -> None:
    hostile_repository(ws, markers, sorted(MECHANISMS))
    got = await every_git_operation(ws, tmp_path / "data")
    assert markers_left(markers) == {}
    assert got["restored"] == ["b.txt", "d.txt"]


async def test_a_workspace_below_the_repository_top_runs_nothing(
    tmp_path: Path, markers: Path
) -> None:
    top = Path(os.path.realpath(tmp_path / "repo"))
    top.mkdir()
    hostile_repository(top, markers, ["fsmonitor", "clean/smudge filter", "textconv"])
    sub = top / "pkg"
    sub.mkdir()
    (sub / "m.py").write_text("x = 1\n")
    (sub / "huge.bin").write_bytes(b"y" * (3 * 1024 * 1024))
    snapshots = GitShadowSnapshots(tmp_path / "data")
    await snapshots.track(sub)
    (sub / "m.py").write_text("x = 2\n")
    await snapshots.track(sub)
    assert "-two\n+two, changed" in await diff_mention(sub)
    assert markers_left(markers) == {}


def test_git_gets_a_scrubbed_environment_and_the_neutral_configuration(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in ``git`` (outside the workspace) shows what git and its children get."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-" + "o" * 30)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "g" * 36)
    monkeypatch.setenv("MY_SERVICE_SECRET", "s3cr3t-value-123")
    monkeypatch.setenv("DB_PASSWORD", "hunter2-hunter2")
    monkeypatch.setenv("GIT_DIR", str(ws / "elsewhere"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='evil'")
    monkeypatch.setenv("GIT_SSH_COMMAND", "evil")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "evil")
    monkeypatch.setenv("SSH_ASKPASS", "evil")
    tools = tmp_path / "tools"
    tools.mkdir()
    seen = tmp_path / "seen"
    seen.mkdir()
    (tools / "git").write_text(
        f'#!/bin/sh\nenv > "{seen}/env"\nprintf "%s\\n" "$@" > "{seen}/argv"\n'
        f'ls -A "$HOME" > "{seen}/home"\n'
    )
    (tools / "git").chmod(0o755)

    result = run_git(
        ["ls-files"],
        cwd=ws,
        avoid=[str(ws)],
        locations={"GIT_WORK_TREE": str(ws), "ANTHROPIC_API_KEY": KEY},
        path=f"{tools}{os.pathsep}/usr/bin:/bin",
    )

    assert isinstance(result, GitResult)
    env = dict(
        line.split("=", 1) for line in (seen / "env").read_text().splitlines() if "=" in line
    )
    assert KEY not in (seen / "env").read_text()
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "MY_SERVICE_SECRET",
                 "DB_PASSWORD", "GIT_DIR", "GIT_CONFIG_PARAMETERS", "GIT_SSH_COMMAND",
                 "GIT_EXTERNAL_DIFF", "SSH_ASKPASS"):  # fmt: skip
        assert name not in env, name
    assert env["GIT_WORK_TREE"] == str(ws)
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_CONFIG_GLOBAL"] == os.devnull
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_OPTIONAL_LOCKS"] == "0"
    assert env["HOME"] != os.environ["HOME"]
    assert (seen / "home").read_text() == ""
    assert str(ws) not in env["PATH"].split(os.pathsep)
    argv = (seen / "argv").read_text().splitlines()
    assert "--no-pager" in argv
    for setting in ("core.fsmonitor=false", "core.hooksPath=/dev/null", "credential.helper=",
                    "protocol.allow=never", "diff.external=", "core.sshCommand=:"):  # fmt: skip
        assert setting in argv, setting
    assert argv[-1] == "ls-files"


def test_a_key_never_reaches_a_planted_fsmonitor_even_when_git_would_start_it(
    ws: Path, markers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the planted fsmonitor would have dumped: the overrides stop it, and were it to
    run anyway it would see no key (the environment is built from nothing)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    hostile_repository(ws, markers, ["fsmonitor"])
    result = run_git(["ls-files", "-m"], cwd=ws, avoid=[str(ws)])
    assert isinstance(result, GitResult)
    assert result.returncode == 0
    assert b"a.txt" in result.stdout
    assert markers_left(markers) == {}


def in_thread(work: Callable[[], Any]) -> Any:
    """``work()`` in a daemon thread; fails the test when it does not end within WAIT."""
    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(work()), daemon=True)
    thread.start()
    thread.join(WAIT)
    assert not thread.is_alive(), "hung"
    return box[0]


@pytest.mark.parametrize("name", ["HEAD", "config", "index"])
def test_a_fifo_where_git_expects_a_file_never_hangs(ws: Path, tmp_path: Path, name: str) -> None:
    (ws / "a.txt").write_text("one\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    target = ws / ".git" / name
    target.unlink()
    os.mkfifo(target)

    tree = in_thread(lambda: asyncio.run(GitShadowSnapshots(tmp_path / "data").track(ws)))
    mention = in_thread(lambda: asyncio.run(diff_mention(ws)))
    summary = in_thread(lambda: _git_summary(str(ws)))

    assert isinstance(tree, str)
    assert mention.startswith("[#diff:")
    assert summary.startswith("a git repository") or summary == "not a git repository"
    assert stat.S_ISFIFO(os.lstat(target).st_mode)


def test_a_fifo_dot_git_file_or_exclude_never_hangs(ws: Path, tmp_path: Path) -> None:
    (ws / "a.txt").write_text("one\n")
    git(ws, "init", "-q")
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "exclude").unlink(missing_ok=True)
    os.mkfifo(ws / ".git" / "info" / "exclude")
    sub = ws / "linked"
    sub.mkdir()
    os.mkfifo(sub / ".git")
    for folder in (ws, sub):
        snapshots = GitShadowSnapshots(tmp_path / f"data-{folder.name}")
        tree = in_thread(lambda f=folder, s=snapshots: asyncio.run(s.track(f)))
        assert isinstance(tree, str)
    assert in_thread(lambda: _git_summary(str(sub))) == "not a git repository"


def test_a_device_as_the_index_is_not_copied(ws: Path, tmp_path: Path) -> None:
    """``.git/index`` → ``/dev/zero`` would be an endless copy for the shadow's first index."""
    (ws / "a.txt").write_text("one\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    (ws / ".git" / "index").unlink()
    (ws / ".git" / "index").symlink_to("/dev/zero")
    tree = in_thread(lambda: asyncio.run(GitShadowSnapshots(tmp_path / "data").track(ws)))
    assert isinstance(tree, str)


def test_a_hook_script_helper_is_what_the_tests_think(tmp_path: Path) -> None:
    """The marker scripts themselves work (so an empty marker folder means something)."""
    markers = tmp_path / "m"
    markers.mkdir()
    hook_script(tmp_path / "h", markers)
    subprocess.run([tmp_path / "h", "probe"], env={**os.environ, "ANTHROPIC_API_KEY": KEY})
    [(name, env)] = markers_left(markers).items()
    assert name.startswith("probe.")
    assert KEY in env


TRIGGERS: dict[str, tuple[list[str], bytes | None]] = {
    "fsmonitor": (["ls-files", "-m"], None),
    "fsmonitor+untrackedCache": (["status", "--porcelain"], None),
    "hooksPath": (["commit", "--allow-empty", "-qm", "x"], None),
    "hooks in .git/hooks": (["commit", "--allow-empty", "-qm", "x"], None),
    "diff.external": (["diff"], None),
    "diff driver command": (["diff"], None),
    "textconv": (["diff", "HEAD"], None),
    "textconv in log -p": (["log", "-p", "-1"], None),
    "editors": (["commit", "--allow-empty"], None),
    "gpg": (["commit", "--allow-empty", "-S", "-qm", "x"], None),
    "sshCommand via a promisor remote": (["fetch", "origin"], None),
    "credential and askpass": (
        ["credential", "fill"],
        b"protocol=https\nhost=example.invalid\nusername=u\n\n",
    ),
    "include.path": (["ls-files"], None),
    "includeIf gitdir": (["ls-files"], None),
}
"""Per mechanism, a git command that starts its program under the repository's plain
configuration (the control shows it does), and that :func:`run_git` must run without it."""


@pytest.mark.parametrize("mechanism", sorted(TRIGGERS))
def test_run_git_neutralises_what_plain_git_runs(
    ws: Path, markers: Path, mechanism: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    hostile_repository(ws, markers, [mechanism.removesuffix(" in log -p")])
    args, stdin = TRIGGERS[mechanism]
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]

    ours = run_git([*identity, *args], cwd=ws, avoid=[str(ws)], stdin=stdin, timeout=WAIT)

    assert isinstance(ours, GitResult)
    assert markers_left(markers) == {}
    plain = subprocess.run(
        ["git", *identity, *args],
        cwd=ws,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=WAIT,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": ""},
        check=False,
    )
    fired = markers_left(markers)
    assert fired, f"the control did not start the program: {plain.stderr!r}"
    assert any(KEY in env for env in fired.values())  # what plain git would have handed over


@pytest.mark.parametrize("where", ["xdg ignore", "gitconfig excludesFile"])
async def test_the_users_global_excludes_still_apply_without_the_users_configuration(
    ws: Path, tmp_path: Path, isolated_home: Path, where: str
) -> None:
    (ws / "kept.txt").write_text("kept\n")
    (ws / "x.swp").write_text("editor swap\n")
    if where == "xdg ignore":
        (isolated_home / ".config" / "git").mkdir(parents=True, exist_ok=True)  # home_layout: one
        (isolated_home / ".config" / "git" / "ignore").write_text("*.swp\n")
    else:
        (isolated_home / "my-ignores").write_text("*.swp\n")
        (isolated_home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/my-ignores\n")
    for folder_is_a_repository in (False, True):
        if folder_is_a_repository:
            git(ws, "init", "-q")
        snapshots = GitShadowSnapshots(tmp_path / f"data-{folder_is_a_repository}")
        await snapshots.track(ws)
        (ws / "kept.txt").write_text(f"kept, {folder_is_a_repository}\n")
        (ws / "x.swp").write_text("swap, changed\n")
        tree = await snapshots.track(ws)
        assert await snapshots.read(ws, tree, "x.swp") is None
        assert await snapshots.read(ws, tree, "kept.txt") == f"kept, {folder_is_a_repository}\n"


def test_a_fifo_gitignore_ends_the_snapshot_at_the_timeout_not_the_run(
    ws: Path, tmp_path: Path
) -> None:
    """git opens every ``.gitignore`` it meets; a FIFO there blocks it, so the timeout ends
    that git process (and its group) and the snapshot fails as an error value."""
    (ws / "a.txt").write_text("one\n")
    os.mkfifo(ws / ".gitignore")
    snapshots = GitShadowSnapshots(tmp_path / "data", git_timeout=2)

    def track() -> str:
        try:
            return asyncio.run(snapshots.track(ws))
        except SnapshotError as error:
            return str(error)

    assert "took more than 2 s" in in_thread(track)


async def test_the_projects_excludes_file_under_home_still_applies(
    ws: Path, tmp_path: Path, isolated_home: Path
) -> None:
    """``core.excludesFile = ~/…`` in the project's config: ``~`` is the user's home, not
    the empty one git runs with."""
    (isolated_home / "project-ignores").write_text("*.log\n")
    (ws / "kept.txt").write_text("kept\n")
    git(ws, "init", "-q")
    git(ws, "config", "core.excludesFile", "~/project-ignores")
    (ws / "build.log").write_text("noise\n")
    snapshots = GitShadowSnapshots(tmp_path / "data")
    tree = await snapshots.track(ws)
    assert await snapshots.read(ws, tree, "kept.txt") == "kept\n"
    assert await snapshots.read(ws, tree, "build.log") is None


@pytest.mark.parametrize("layout", ["plain", "split index", "linked worktree"])
async def test_diff_in_the_private_git_dir_shows_what_git_diff_head_shows(
    tmp_path: Path, layout: str
) -> None:
    """Staged new files come from a copy of the project's index (its shared base too)."""
    repo = Path(os.path.realpath(tmp_path / "repo"))
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    git(repo, "init", "-q")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "first")
    folder = repo
    if layout == "linked worktree":
        folder = Path(os.path.realpath(tmp_path / "linked"))
        git(repo, "worktree", "add", "-q", str(folder))
    (folder / "new.txt").write_text("new\n")
    git(folder, "add", "new.txt")
    if layout == "split index":
        git(folder, "update-index", "--split-index")
    (folder / "a.txt").write_text("a\nc\n")

    text = await diff_mention(folder)

    assert "+++ b/new.txt\n@@ -0,0 +1 @@\n+new" in text
    assert " a\n+c" in text


@pytest.mark.parametrize("directive", ["[include]", '[includeIf "gitdir:/"]'])
def test_a_fifo_the_config_includes_makes_no_repository_instead_of_a_wait(
    ws: Path, tmp_path: Path, directive: str
) -> None:
    """Every git command on the project would block opening the included FIFO until its
    timeout; the repository is treated as none instead, at once."""
    (ws / "a.txt").write_text("one\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    os.mkfifo(ws / "included.cfg")
    with open(ws / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(f'{directive}\n\tpath = "../included.cfg"\n')
    (ws / "big.bin").write_bytes(b"z" * (3 * 1024 * 1024))
    snapshots = GitShadowSnapshots(tmp_path / "data", git_timeout=WAIT * 2)

    tree = in_thread(lambda: asyncio.run(snapshots.track(ws)))
    mention = in_thread(lambda: asyncio.run(diff_mention(ws)))

    assert isinstance(tree, str)
    assert "not regular files" in mention
