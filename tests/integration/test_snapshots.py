"""The snapshot store (lsp_agent.snapshots) against real git, in git projects and plain folders."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.snapshots import FileChange, GitShadowSnapshots, PruneReport, SnapshotError
from lsp_agent.snapshots.layout import TREES_LOG, shadow_dir, snapshots_root
from lsp_agent.snapshots.shadow_repo import GitRunner, open_shadow

DAY = 24 * 60 * 60

State = dict[str, tuple[str, bytes, bool]]


def git(cwd: Path, *args: str, read_only: bool = False) -> str:
    """Run git in the project as its user would (author set here, nothing global).

    ``read_only``: with ``GIT_OPTIONAL_LOCKS=0``, so that ``git status`` does not refresh the
    project's index itself.
    """
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"} if read_only else None
    proc = subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
    )
    return proc.stdout.decode()


def write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def append(path: Path, text: str) -> None:
    with open(path, "a") as f:
        f.write(text)


def state(root: Path) -> State:
    """Every file under ``root`` (``.git`` left out): kind, bytes or link target, executable."""
    found: State = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" or Path(folder, d).is_symlink()]
        for name in [*files, *(d for d in dirs if Path(folder, d).is_symlink())]:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path).encode(), False)
            else:
                executable = bool(path.stat().st_mode & stat.S_IXUSR)
                found[rel] = ("file", path.read_bytes(), executable)
    return found


def tree_hash(folder: Path) -> dict[str, str]:
    """Relative path → SHA-256 of the bytes of every file under ``folder`` (a .git dir)."""
    hashes = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            hashes[path.relative_to(folder).as_posix()] = hashlib.sha256(
                path.read_bytes()
            ).hexdigest()
    return hashes


def populate(workspace: Path) -> None:
    write(workspace / "a.txt", "".join(f"line {i}\n" for i in range(10)))
    write(workspace / "b.py", "print('b')\n")
    write(workspace / "crlf.txt", b"one\r\ntwo\r\n")
    write(workspace / "src" / "c.md", "# C\n\ntext\n")
    write(workspace / "src" / "deep" / "d.txt", "d\n")
    write(workspace / "gone.txt", "to be deleted\n")
    write(workspace / "data.bin", bytes(range(256)) * 4)
    write(workspace / "run.sh", "#!/bin/sh\necho hi\n")
    (workspace / "run.sh").chmod(0o755)
    write(workspace / "name with spaces ü.txt", "unicode\n")
    os.symlink("a.txt", workspace / "link")
    write(workspace / ".gitignore", "*.log\nbuild/\n")
    write(workspace / "app.log", "ignored log\n")
    write(workspace / "build" / "out.o", b"\x00ignored")


def agent_edits(workspace: Path) -> None:
    """Three files edited, one created (in a new folder), one deleted."""
    append(workspace / "a.txt", "added 1\nadded 2\n")
    write(workspace / "src" / "c.md", "# C\n\nnew text\n")
    write(workspace / "crlf.txt", b"one\r\nTWO\r\nthree\r\n")
    write(workspace / "new" / "e.txt", "e1\ne2\ne3\n")
    (workspace / "gone.txt").unlink()


def make_project(root: Path, *, attributes: bool = True) -> Path:
    """A git project with history, a branch, a stash, packed refs and a staged change.

    With ``attributes``, a ``.gitattributes`` asks git to convert line endings (so the project's
    blobs are not the bytes on disk, and the shadow must not start from its index).
    """
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    populate(root)
    if attributes:
        write(root / ".gitattributes", "* text=auto\n*.bin binary\n")
    # Written a minute ago: the index git writes now holds their stat data as clean (not
    # "racily clean", which would make every reader compare contents anyway).
    a_minute_ago = time.time() - 60
    for path in root.rglob("*"):
        if ".git" not in path.parts:
            os.utime(path, (a_minute_ago, a_minute_ago), follow_symlinks=False)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    git(root, "branch", "feature")
    git(root, "tag", "v1")
    git(root, "pack-refs", "--all")
    write(root / "b.py", "print('stashed')\n")
    git(root, "stash", "push", "-q")
    write(root / "staged.txt", "staged\n")
    git(root, "add", "staged.txt")
    write(root / ".git" / "info" / "exclude", "secret.txt\n")
    write(root / "secret.txt", "excluded by info/exclude\n")
    return root


@pytest.fixture
def snapshots(tmp_path: Path) -> GitShadowSnapshots:
    return GitShadowSnapshots(tmp_path / "data")


@pytest.fixture(params=["git", "git-no-attributes", "plain"])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    if request.param == "git":
        yield make_project(tmp_path / "project")
    elif request.param == "git-no-attributes":
        yield make_project(tmp_path / "project", attributes=False)
    else:
        folder = tmp_path / "folder"
        folder.mkdir()
        populate(folder)
        yield folder


async def test_edit_create_delete_then_restore_both_ways(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    before = state(workspace)
    t0 = await snapshots.track(workspace)
    assert await snapshots.track(workspace) == t0  # nothing changed: the same tree

    agent_edits(workspace)
    after = state(workspace)
    t1 = await snapshots.track(workspace)
    assert t1 != t0

    changes = await snapshots.diff(workspace, t0, t1)
    assert changes == [
        FileChange(path="a.txt", status="modify", additions=2, deletions=0),
        FileChange(path="crlf.txt", status="modify", additions=2, deletions=1),
        FileChange(path="gone.txt", status="delete", additions=0, deletions=1),
        FileChange(path="new/e.txt", status="add", additions=3, deletions=0),
        FileChange(path="src/c.md", status="modify", additions=1, deletions=1),
    ]
    patch = await snapshots.patch(workspace, t0, t1)
    assert "--- a/a.txt\n+++ b/a.txt\n" in patch
    assert "+added 2\n" in patch
    assert "deleted file mode 100644" in patch
    assert "+TWO\r\n" in patch  # bytes as they are on disk, no end-of-line conversion
    assert await snapshots.patch(workspace, t1, t1) == ""

    restored = await snapshots.restore(workspace, t0)
    assert restored == ["a.txt", "crlf.txt", "gone.txt", "new/e.txt", "src/c.md"]
    assert state(workspace) == before
    assert not (workspace / "new").exists()  # the folder the agent made is gone too
    assert await snapshots.track(workspace) == t0

    assert await snapshots.restore(workspace, t1) == restored
    assert state(workspace) == after
    assert await snapshots.track(workspace) == t1
    assert await snapshots.restore(workspace, t1) == []


async def test_restore_only_the_given_paths(snapshots: GitShadowSnapshots, workspace: Path) -> None:
    t0 = await snapshots.track(workspace)
    agent_edits(workspace)
    await snapshots.track(workspace)
    edited = state(workspace)

    assert await snapshots.restore(workspace, t0, ["a.txt", "gone.txt", "new"]) == [
        "a.txt",
        "gone.txt",
        "new/e.txt",
    ]
    now = state(workspace)
    assert now["a.txt"][1] == "".join(f"line {i}\n" for i in range(10)).encode()
    assert now["gone.txt"][1] == b"to be deleted\n"
    assert "new/e.txt" not in now
    assert now["src/c.md"] == edited["src/c.md"]  # not asked for: left as the agent made it
    assert now["crlf.txt"] == edited["crlf.txt"]


async def test_type_and_mode_changes_are_restored(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    before = state(workspace)
    t0 = await snapshots.track(workspace)
    (workspace / "run.sh").chmod(0o644)
    (workspace / "link").unlink()
    write(workspace / "link", "now a file\n")
    (workspace / "data.bin").unlink()
    os.symlink("b.py", workspace / "data.bin")
    t1 = await snapshots.track(workspace)
    assert {c.path for c in await snapshots.diff(workspace, t0, t1)} == {
        "run.sh",
        "link",
        "data.bin",
    }

    await snapshots.restore(workspace, t0)
    assert state(workspace) == before


async def test_a_file_becoming_a_folder_and_back(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    before = state(workspace)
    t0 = await snapshots.track(workspace)
    (workspace / "b.py").unlink()
    write(workspace / "b.py" / "inner.txt", "now a folder\n")
    (workspace / "src" / "deep" / "d.txt").unlink()
    (workspace / "src" / "deep").rmdir()
    write(workspace / "src" / "deep", "now a file\n")
    after = state(workspace)
    t1 = await snapshots.track(workspace)
    assert [(c.path, c.status) for c in await snapshots.diff(workspace, t0, t1)] == [
        ("b.py", "delete"),
        ("b.py/inner.txt", "add"),
        ("src/deep", "add"),
        ("src/deep/d.txt", "delete"),
    ]
    await snapshots.restore(workspace, t0)
    assert state(workspace) == before
    await snapshots.restore(workspace, t1)
    assert state(workspace) == after


async def test_ignored_files_are_never_recorded_nor_restored(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    t0 = await snapshots.track(workspace)
    write(workspace / "app.log", "the log changed\n")
    write(workspace / "build" / "new.o", b"new object")
    write(workspace / "b.py", "print('agent')\n")
    t1 = await snapshots.track(workspace)
    assert [c.path for c in await snapshots.diff(workspace, t0, t1)] == ["b.py"]

    assert await snapshots.restore(workspace, t0) == ["b.py"]
    assert (workspace / "app.log").read_text() == "the log changed\n"
    assert (workspace / "build" / "new.o").read_bytes() == b"new object"
    assert (workspace / "build" / "out.o").read_bytes() == b"\x00ignored"


async def test_files_a_changed_gitignore_excludes_stop_being_recorded(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    write(workspace / "gen" / "out.js", "generated\n")
    t0 = await snapshots.track(workspace)
    append(workspace / ".gitignore", "gen/\n")
    t1 = await snapshots.track(workspace)
    assert [(c.path, c.status) for c in await snapshots.diff(workspace, t0, t1)] == [
        (".gitignore", "modify"),
        ("gen/out.js", "delete"),  # no longer recorded (the file is still there)
    ]
    write(workspace / "gen" / "out.js", "generated again\n")
    assert await snapshots.track(workspace) == t1
    await snapshots.restore(workspace, t1)
    assert (workspace / "gen" / "out.js").read_text() == "generated again\n"


async def test_project_info_exclude_is_respected(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "project")
    t0 = await snapshots.track(project)
    write(project / "secret.txt", "changed, still excluded\n")
    write(project / ".git" / "info" / "exclude", "secret.txt\nlater.txt\n")
    write(project / "later.txt", "excluded after the project's exclude file changed\n")
    t1 = await snapshots.track(project)
    # only the exclude file itself is recorded (a protected file, docs/snapshots.md)
    assert [c.path for c in await snapshots.diff(project, t0, t1)] == [".git/info/exclude"]


async def test_untracked_large_files_are_skipped(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    t0 = await snapshots.track(workspace)
    big = os.urandom(3 * 1024 * 1024)
    write(workspace / "big.dat", big)
    write(workspace / "small.txt", "small\n")
    t1 = await snapshots.track(workspace)
    assert [c.path for c in await snapshots.diff(workspace, t0, t1)] == ["small.txt"]

    assert await snapshots.restore(workspace, t0) == ["small.txt"]
    assert (workspace / "big.dat").read_bytes() == big  # not recorded, so never deleted


async def test_large_files_the_project_tracks_are_recorded(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    original = b"a" * (3 * 1024 * 1024)
    write(project / "tracked.big", original)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "big")
    t0 = await snapshots.track(project)
    write(project / "tracked.big", b"b" * (3 * 1024 * 1024))
    t1 = await snapshots.track(project)
    assert [c.path for c in await snapshots.diff(workspace=project, from_tree=t0, to_tree=t1)] == [
        "tracked.big"
    ]
    await snapshots.restore(project, t0)
    assert (project / "tracked.big").read_bytes() == original


async def test_the_projects_git_dir_is_never_modified(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "project")
    git_dir = project / ".git"
    status_before = git(project, "status", "--porcelain")
    before = tree_hash(git_dir)
    assert {"HEAD", "index", "config", "packed-refs", "refs/stash", "logs/refs/stash"} <= set(
        before
    )

    t0 = await snapshots.track(project)
    agent_edits(project)
    t1 = await snapshots.track(project)
    await snapshots.diff(project, t0, t1)
    await snapshots.patch(project, t0, t1)
    await snapshots.changed_since(project, t1, ["a.txt"])
    await snapshots.restore(project, t0)
    await snapshots.restore(project, t1, ["a.txt"])
    await snapshots.prune()

    assert tree_hash(git_dir) == before
    agent_edits_undone = state(project)
    assert "new/e.txt" not in agent_edits_undone
    assert git(project, "stash", "list", read_only=True).count("stash@{") == 1
    await snapshots.restore(project, t0)
    assert git(project, "status", "--porcelain", read_only=True) == status_before
    assert tree_hash(git_dir) == before


async def test_objects_are_shared_with_the_project(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "project")
    await snapshots.track(project)
    shadow = shadow_dir(tmp_path / "data", project.resolve())
    alternates = (shadow / "objects" / "info" / "alternates").read_text()
    assert alternates.strip() == str((project / ".git" / "objects").resolve())
    own = [p for p in (shadow / "objects").rglob("*") if p.is_file() and "info" not in p.parts]
    # Only what the project's objects lack: the new tree(s) and the uncommitted files' blobs.
    assert len(own) < 10


async def test_a_clean_projects_index_is_reused(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    for i in range(50):
        write(project / f"dir{i % 5}" / f"f{i}.txt", f"{i}\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    tree = await snapshots.track(project)
    head = git(project, "rev-parse", "HEAD^{tree}").strip()
    # the project's files are its own tree; only the protected .git files are added
    changes = await snapshots.diff(project, head, tree)
    assert [c.path for c in changes] == [".git/config", ".git/info/exclude"]
    shadow = shadow_dir(tmp_path / "data", project.resolve())
    own = [p for p in (shadow / "objects").rglob("*") if p.is_file() and "info" not in p.parts]
    assert len(own) <= 5  # those two blobs and their trees: nothing of the project hashed again


def test_the_index_is_copied_only_when_no_conversion_applies(tmp_path: Path) -> None:
    def seeded(project: Path) -> bool:
        repo = open_shadow(
            data_dir=tmp_path / "data",
            workspace=project.resolve(),
            runner=GitRunner(),
            base_env=os.environ,
            clock=time.time,
        )
        return (repo.git_dir / "index").is_file()

    assert seeded(make_project(tmp_path / "clean", attributes=False))
    assert not seeded(make_project(tmp_path / "attributes", attributes=True))
    autocrlf = make_project(tmp_path / "autocrlf", attributes=False)
    git(autocrlf, "config", "core.autocrlf", "true")
    assert not seeded(autocrlf)
    assume = make_project(tmp_path / "assume", attributes=False)
    git(assume, "update-index", "--assume-unchanged", "a.txt")
    assert not seeded(assume)


async def test_an_object_gone_from_the_project_rebuilds_the_index(
    snapshots: GitShadowSnapshots, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project = make_project(tmp_path / "project", attributes=False)
    t0 = await snapshots.track(project)
    blob = git(project, "rev-parse", "HEAD:a.txt").strip()
    (project / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # as if the project pruned it
    write(project / "b.py", "print('changed')\n")
    t1 = await snapshots.track(project)
    assert "rebuilt" in caplog.text
    assert [c.path for c in await snapshots.diff(project, t0, t1)] == ["b.py"]
    await snapshots.restore(project, t1, ["a.txt"])
    assert (project / "a.txt").read_text() == "".join(f"line {i}\n" for i in range(10))


async def test_changed_since_reports_a_users_edit(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    await snapshots.track(workspace)
    write(workspace / "a.txt", "agent\n")
    write(workspace / "new.txt", "agent made this\n")
    after_step = await snapshots.track(workspace)
    paths = ["a.txt", "b.py", "new.txt", "src"]
    assert await snapshots.changed_since(workspace, after_step, paths) == []

    write(workspace / "a.txt", "the user's edit\n")
    (workspace / "new.txt").unlink()
    write(workspace / "src" / "c.md", "the user again\n")
    assert await snapshots.changed_since(workspace, after_step, paths) == [
        "a.txt",
        "new.txt",
        "src",
    ]

    # With force, the restore brings the agent's state back over the user's edits.
    await snapshots.restore(workspace, after_step, ["a.txt"])
    assert (workspace / "a.txt").read_text() == "agent\n"
    assert await snapshots.changed_since(workspace, after_step, ["a.txt"]) == []


async def test_workspace_in_a_subfolder_of_a_repository(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo / ".gitignore", "*.tmp\n")
    write(repo / "outside.txt", "outside\n")
    write(repo / "pkg" / "inside.txt", "inside\n")
    write(repo / "pkg" / "cache.tmp", "ignored by the root .gitignore\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    workspace = repo / "pkg"

    t0 = await snapshots.track(workspace)
    write(workspace / "inside.txt", "changed\n")
    write(workspace / "sub" / "added.txt", "added\n")
    write(workspace / "cache.tmp", "still ignored\n")
    write(repo / "outside.txt", "changed outside the workspace\n")
    t1 = await snapshots.track(workspace)
    assert [(c.path, c.status) for c in await snapshots.diff(workspace, t0, t1)] == [
        ("inside.txt", "modify"),
        ("sub/added.txt", "add"),
    ]
    await snapshots.restore(workspace, t0)
    assert (workspace / "inside.txt").read_text() == "inside\n"
    assert not (workspace / "sub").exists()
    assert (workspace / "cache.tmp").read_text() == "still ignored\n"
    assert (repo / "outside.txt").read_text() == "changed outside the workspace\n"

    write(workspace / "gen" / "x.js", "x\n")
    t2 = await snapshots.track(workspace)
    write(workspace / ".gitignore", "gen/\n")
    t3 = await snapshots.track(workspace)
    assert [(c.path, c.status) for c in await snapshots.diff(workspace, t2, t3)] == [
        (".gitignore", "add"),
        ("gen/x.js", "delete"),
    ]


async def test_nested_repositories_are_left_out(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    write(folder / "a.txt", "a\n")
    t0 = await snapshots.track(folder)
    nested = folder / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")  # no commit yet: git add would refuse it as a gitlink
    write(nested / "lib.txt", "lib\n")
    write(folder / "b.txt", "b\n")
    t1 = await snapshots.track(folder)
    assert [c.path for c in await snapshots.diff(folder, t0, t1)] == ["b.txt"]
    await snapshots.restore(folder, t0)
    assert (nested / "lib.txt").read_text() == "lib\n"
    assert not (folder / "b.txt").exists()


async def test_a_first_snapshot_of_many_files(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    for i in range(600):
        write(folder / f"d{i % 7}" / f"f{i}.txt", f"{i}\n")
    write(folder / "huge.bin", b"\0" * (3 * 1024 * 1024))
    nested = folder / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    write(nested / "lib.txt", "lib\n")
    t0 = await snapshots.track(folder)
    listed = git(folder, "--git-dir", str(shadow_dir(tmp_path / "data", folder.resolve())),
                 "ls-tree", "-r", "--name-only", t0)  # fmt: skip
    assert len(listed.splitlines()) == 600
    assert "huge.bin" not in listed
    assert "vendor" not in listed


async def test_a_data_dir_inside_the_workspace_is_left_out(tmp_path: Path, workspace: Path) -> None:
    snapshots = GitShadowSnapshots(workspace / ".lsp-agent")
    t0 = await snapshots.track(workspace)
    write(workspace / "b.py", "print('changed')\n")
    t1 = await snapshots.track(workspace)
    assert [c.path for c in await snapshots.diff(workspace, t0, t1)] == ["b.py"]
    assert await snapshots.track(workspace) == t1


async def test_another_process_using_the_same_shadow(tmp_path: Path, workspace: Path) -> None:
    ours = GitShadowSnapshots(tmp_path / "data")
    theirs = GitShadowSnapshots(tmp_path / "data")
    t0 = await ours.track(workspace)
    write(workspace / "b.py", "print('theirs')\n")
    t1 = await theirs.track(workspace)
    assert t1 != t0
    assert await ours.track(workspace) == t1  # not the tree it remembered


async def test_snapshots_survive_git_init_and_removing_git(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    write(folder / "a.txt", "a\n")
    plain = await snapshots.track(folder)
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "first")
    write(folder / "b.txt", "b\n")
    fresh = GitShadowSnapshots(tmp_path / "data")  # a new process sees the repository
    in_git = await fresh.track(folder)
    changed = [c.path for c in await fresh.diff(folder, plain, in_git)]
    assert changed == [".git/config", ".git/info/exclude", "b.txt"]
    await fresh.restore(folder, plain)
    assert not (folder / "b.txt").exists()
    assert (folder / ".git" / "config").is_file()  # a restore never deletes it

    shutil.rmtree(folder / ".git")
    write(folder / "c.txt", "c\n")
    again = GitShadowSnapshots(tmp_path / "data")
    after = await again.track(folder)
    assert [c.path for c in await again.diff(folder, plain, after)] == ["c.txt"]


async def test_concurrent_calls_on_one_workspace_are_serialized(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    trees = await asyncio.gather(*(snapshots.track(workspace) for _ in range(5)))
    assert len(set(trees)) == 1


async def test_a_cancelled_track_still_finishes(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    task = asyncio.create_task(snapshots.track(workspace))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    tree = await snapshots.track(workspace)  # the lock was released only after git finished
    assert await snapshots.diff(workspace, tree, tree) == []


async def test_bad_input_is_refused(snapshots: GitShadowSnapshots, workspace: Path) -> None:
    tree = await snapshots.track(workspace)
    with pytest.raises(SnapshotError):
        await snapshots.diff(workspace, "--output=/tmp/x", tree)
    with pytest.raises(SnapshotError):
        await snapshots.restore(workspace, tree, ["../outside.txt"])
    with pytest.raises(SnapshotError):
        await snapshots.restore(workspace, tree, ["/etc/passwd"])
    with pytest.raises(SnapshotError):
        await snapshots.changed_since(workspace, tree, [".git/objects/info/alternates"])
    with pytest.raises(SnapshotError):
        await snapshots.track(workspace / "missing")
    with pytest.raises(SnapshotError):
        await snapshots.diff(workspace, "0" * 40, tree)  # no such tree


async def test_prune_runs_at_most_once_a_day(tmp_path: Path, workspace: Path) -> None:
    now = [1_000_000_000.0]
    snapshots = GitShadowSnapshots(tmp_path / "data", clock=lambda: now[0])
    await snapshots.track(workspace)

    first = await snapshots.prune()
    assert first == PruneReport(ran=True, collected=1)
    now[0] += DAY - 60
    assert not (await snapshots.prune()).ran
    now[0] += 120
    assert (await snapshots.prune()).ran
    assert (snapshots_root(tmp_path / "data") / ".last-prune").is_file()


async def test_prune_drops_old_snapshots_and_unused_shadows(
    tmp_path: Path, workspace: Path
) -> None:
    data = tmp_path / "data"
    snapshots = GitShadowSnapshots(data)
    old = await snapshots.track(workspace)
    write(workspace / "a.txt", "only in the old snapshot's successor\n")
    write(workspace / "src" / "c.md", "x\n")
    current = await snapshots.track(workspace)
    assert old != current

    # Everything written a week and a day ago; the old tree last recorded then too.
    shadow = shadow_dir(data, workspace.resolve())
    long_ago = time.time() - 8 * DAY
    for path in (shadow / "objects").rglob("*"):
        if path.is_file():
            os.utime(path, (long_ago, long_ago))
    log = (shadow / TREES_LOG).read_text().splitlines()
    (shadow / TREES_LOG).write_text(
        "".join(
            f"{int(long_ago)} {line.split()[1]}\n" if line.split()[1] == old else f"{line}\n"
            for line in log
        )
    )

    other = tmp_path / "other"
    write(other / "x.txt", "x\n")
    await snapshots.track(other)
    other_shadow = shadow_dir(data, other.resolve())
    os.utime(other_shadow / TREES_LOG, (long_ago, long_ago))

    report = await snapshots.prune()
    assert report == PruneReport(ran=True, collected=1, removed=1)
    assert not other_shadow.exists()
    assert await snapshots.diff(workspace, current, current) == []  # kept: still in use
    assert await snapshots.track(workspace) == current
    with pytest.raises(SnapshotError):
        await snapshots.diff(workspace, old, current)


# -- open buffers (an overlay) ----------------------------------------------------------------


async def test_an_overlay_records_open_buffers_instead_of_the_disk(
    snapshots: GitShadowSnapshots, workspace: Path, tmp_path: Path
) -> None:
    root = workspace.resolve()
    t0 = await snapshots.track(workspace)
    on_disk = state(workspace)
    overlay = {
        str(root / "a.txt"): "the buffer's text\n",
        str(root / "src" / "c.md"): (root / "src" / "c.md").read_text(),  # saved: same
        str(root / "app.log"): "an ignored file stays out\n",
        str(root / "not-on-disk.txt"): "a buffer never adds a file\n",
        str(root / "link"): "a symlink keeps its target\n",
        str(tmp_path / "elsewhere.txt"): "outside the workspace\n",
        str(root / ".." / "escape.txt"): "outside too\n",
    }
    t1 = await snapshots.track(workspace, overlay)
    assert [(c.path, c.status) for c in await snapshots.diff(workspace, t0, t1)] == [
        ("a.txt", "modify")
    ]
    assert await snapshots.read(workspace, t1, "a.txt") == "the buffer's text\n"
    assert await snapshots.read(workspace, t0, "a.txt") == "".join(f"line {i}\n" for i in range(10))
    assert state(workspace) == on_disk  # nothing written
    assert await snapshots.track(workspace) == t0  # the disk's own tree is unchanged
    assert await snapshots.track(workspace, overlay) == t1
    assert (
        await snapshots.track(workspace, {str(root / "a.txt"): (root / "a.txt").read_text()}) == t0
    )
    log = (shadow_dir(tmp_path / "data", root) / TREES_LOG).read_text()
    assert t1 in log  # pruning keeps it like any snapshot

    # Restoring the disk to the overlay's tree writes the buffer's text.
    await snapshots.restore(workspace, t1, ["a.txt"])
    assert (workspace / "a.txt").read_text() == "the buffer's text\n"


async def test_read_answers_a_files_text_in_a_tree(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    tree = await snapshots.track(workspace)
    assert await snapshots.read(workspace, tree, "b.py") == "print('b')\n"
    assert await snapshots.read(workspace, tree, "crlf.txt") == "one\r\ntwo\r\n"
    assert await snapshots.read(workspace, tree, "name with spaces ü.txt") == "unicode\n"
    data = await snapshots.read(workspace, tree, "data.bin")
    assert data is not None
    assert data.encode("utf-8", errors="surrogateescape") == bytes(range(256)) * 4
    for absent in ("missing.txt", "src", "link", "app.log", "src/nope/x.txt"):
        assert await snapshots.read(workspace, tree, absent) is None, absent
    with pytest.raises(SnapshotError):
        await snapshots.read(workspace, tree, "../outside.txt")


async def test_changed_since_compares_open_buffers(
    snapshots: GitShadowSnapshots, workspace: Path
) -> None:
    a = str(workspace.resolve() / "a.txt")
    agent = {a: "the agent's edit\n"}
    after_step = await snapshots.track(workspace, agent)
    assert await snapshots.changed_since(workspace, after_step, ["a.txt"], agent) == []
    assert await snapshots.changed_since(workspace, after_step, ["a.txt", "b.py"]) == ["a.txt"]
    typed = {a: "the agent's edit\nthe user typed\n"}
    assert await snapshots.changed_since(workspace, after_step, ["a.txt", "src"], typed) == [
        "a.txt"
    ]


async def test_an_overlay_keeps_the_disks_bom_and_bytes_that_are_not_utf8(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    write(folder / "bom.txt", b"\xef\xbb\xbfbom\n")
    write(folder / "latin1.txt", b"caf\xe9\n")
    root = folder.resolve()
    t0 = await snapshots.track(folder)
    same = {
        str(root / "bom.txt"): "bom\n",  # editors keep the BOM out of the buffer
        str(root / "latin1.txt"): b"caf\xe9\n".decode("utf-8", errors="surrogateescape"),
    }
    assert await snapshots.track(folder, same) == t0
    t1 = await snapshots.track(folder, {str(root / "bom.txt"): "bom edited\n"})
    assert await snapshots.read(folder, t1, "bom.txt") == "\ufeffbom edited\n"
    t2 = await snapshots.track(folder, {str(root / "bom.txt"): "\ufeffwith its own\n"})
    assert await snapshots.read(folder, t2, "bom.txt") == "\ufeffwith its own\n"


async def test_an_overlay_in_a_subfolder_of_a_repository(
    snapshots: GitShadowSnapshots, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    write(repo / "top.txt", "top\n")
    write(repo / "pkg" / "inside.txt", "inside\n")
    write(repo / "pkg" / "deep" / "x.txt", "x\n")
    repo.mkdir(exist_ok=True)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    workspace = repo / "pkg"
    root = workspace.resolve()
    t0 = await snapshots.track(workspace)
    t1 = await snapshots.track(
        workspace,
        {
            str(root / "deep" / "x.txt"): "buffer\n",
            str(repo.resolve() / "top.txt"): "outside the workspace\n",
        },
    )
    assert [c.path for c in await snapshots.diff(workspace, t0, t1)] == ["deep/x.txt"]
    assert await snapshots.read(workspace, t1, "deep/x.txt") == "buffer\n"
    assert await snapshots.read(workspace, t1, "inside.txt") == "inside\n"
    assert await snapshots.read(workspace, t1, "top.txt") is None  # not in the workspace
    assert (workspace / "deep" / "x.txt").read_text() == "x\n"
