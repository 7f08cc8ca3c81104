"""The blocking half of the snapshot store: one shadow git repository per workspace folder.

A shadow repository is a git dir under the data dir (see :mod:`lsp_agent.snapshots.layout`)
whose work tree is the workspace's. git always runs with ``GIT_DIR`` = the shadow dir,
``GIT_WORK_TREE`` = the work tree, ``GIT_INDEX_FILE`` = the shadow's own index and
``GIT_OPTIONAL_LOCKS=0``, so nothing in the project's ``.git`` is ever written: not HEAD,
the index, refs, the stash nor the config.

- A workspace inside a git repository shares that repository's objects through
  ``objects/info/alternates`` (read only; new objects are written to the shadow) and follows
  its ignore rules: the work tree is the repository's top level (so ``.gitignore`` files above
  the workspace apply), every command is scoped to the workspace folder, its
  ``info/exclude`` is copied. When it is safe (no content conversions in play), the shadow
  index starts as a copy of the project's index, so files git has already hashed are not
  hashed again.
- Any other folder (or one the enclosing repository ignores) gets a standalone repository;
  a ``.gitignore`` in it still applies.
- Untracked files larger than :data:`LARGE_FILE_LIMIT` are left out (files the project
  tracks are kept whatever their size); nested repositories are left out.
- Content is stored byte for byte: ``info/attributes`` turns off end-of-line conversion,
  filters, ``ident`` and working-tree encodings.

Recording a tree (:meth:`ShadowRepo.track`) is one ``git ls-files`` when nothing changed
(changed and untracked files, listed against the shadow index; unchanged files are skipped by
their stat data), plus ``git update-index`` of just the listed paths and ``git write-tree``
when something did. Every call here blocks; :mod:`lsp_agent.snapshots.git_shadow` runs them in a
thread, one at a time per shadow.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import attrs

from lsp_agent.core.errors import LspAgentError
from lsp_agent.core.permission.protected import SANDBOX_READ_ONLY
from lsp_agent.snapshots import layout
from lsp_agent.system import beneath
from lsp_agent.system.atomic import write_atomic
from lsp_agent.system.git_files import (
    copy_regular_file,
    read_regular_file,
    unusable_repository_files,
)
from lsp_agent.system.git_process import DEFAULT_TIMEOUT, GitFailure, GitResult, run_git
from lsp_agent.workspace.temp_files import create_temp_at

__all__ = [
    "LARGE_FILE_LIMIT",
    "ChangeStatus",
    "FileChange",
    "GitRunner",
    "ShadowRepo",
    "SnapshotError",
    "collect_garbage",
    "open_shadow",
]

_log = logging.getLogger(__name__)

LARGE_FILE_LIMIT = 2 * 1024 * 1024
"""Untracked files larger than this (bytes) are not recorded."""

ChangeStatus = Literal["add", "delete", "modify"]

_MANY_PATHS = 256
"""Above this many changed paths, stage with one ``.`` pathspec: matching a long pathspec
list costs (pathspecs × files)."""

_BATCH = 500
"""Paths per command line (diff-tree takes its pathspecs as arguments)."""

_LOG_REFRESH = 3600.0
"""An unchanged tree is logged again after this many seconds, so pruning sees it in use."""

_LOCK_RETRIES = 40
_LOCK_WAIT = 0.05
_STALE_LOCK = 600.0
"""An ``index.lock`` older than this (seconds) is left over from a crash and removed."""

_TREE_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SUBMODULE = b"160000"
_BOM = b"\xef\xbb\xbf"
_KEEP_REFS = "refs/keep"
_ATTRIBUTES = b"* -text -filter -ident -working-tree-encoding\n"
_SETUP_VERSION = 1
_SETUP_FIXED = ("version", "workspace", "object_format")
"""Setup keys whose change means a new shadow (the others are followed in place)."""

# Environment variables kept from ours when running git; every other GIT_* is dropped (a
# GIT_DIR or GIT_INDEX_FILE inherited from a hook would point git at the project's files).
_KEPT_GIT_VARS = frozenset({"GIT_EXEC_PATH", "GIT_CEILING_DIRECTORIES"})

_CONFIG = """\
[core]
\tbare = false
\tlogAllRefUpdates = false
\tautocrlf = false
\tsafecrlf = false
\tfsmonitor = false
\tuntrackedCache = false
\tquotePath = false
\tpreloadIndex = true
\tlongpaths = true
[index]
\tversion = 4
\tthreads = true
[gc]
\tauto = 0
\twriteCommitGraph = false
[maintenance]
\tauto = false
[advice]
\taddEmbeddedRepo = false
\taddIgnoredFile = false
"""

_Sig = tuple[int, int, int, int]

_TEXT_LIMIT = 4 << 20
"""At most this much of a repository's ``config``, ``info/exclude`` or attributes is read."""
_GC_TIMEOUT = 600.0
"""Seconds pruning a shadow repository may take (other git commands: the default)."""
_INDEX_LIMIT = 1 << 30
"""A project index larger than this is not copied as the shadow's starting index."""


class SnapshotError(LspAgentError):
    """A snapshot could not be recorded, compared or restored; the message says why."""


@attrs.frozen(kw_only=True)
class FileChange:
    """One file that differs between two snapshot trees."""

    path: str
    """Relative to the workspace folder, ``/``-separated."""
    status: ChangeStatus
    additions: int
    """Lines added (0 for a binary file)."""
    deletions: int
    """Lines deleted (0 for a binary file)."""
    binary: bool = False


def clean_environment(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` without the ``GIT_*`` variables that redirect git, plus our fixed ones."""
    env = {k: v for k, v in base.items() if not k.startswith("GIT_") or k in _KEPT_GIT_VARS}
    env.update(
        GIT_OPTIONAL_LOCKS="0",
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_REPLACE_OBJECTS="1",
        LC_ALL="C",
    )
    return env


class GitRunner:
    """Runs git through :func:`lsp_agent.system.git_process.run_git` (a git found outside
    the workspace folders, a scrubbed environment, the repository's program-running keys
    overridden, a timeout); standard input is never inherited.

    ``env`` of :meth:`run` only says where the repository is (``GIT_DIR`` and the like) and
    which ``PATH`` to search; nothing else of it reaches git.
    """

    def __init__(self, executable: str | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._executable = executable
        self._timeout = timeout
        self._avoid: set[str] = set()

    def avoid(self, *folders: Path | str) -> None:
        """Never take git from ``folders`` (workspace folders, their repository's top)."""
        self._avoid.update(str(f) for f in folders)

    def run(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin: bytes | None = None,
        ok: Collection[int] = (0,),
        index_lock: Path | None = None,
        timeout: float | None = None,
    ) -> GitResult:
        """Run ``git args``; raise :class:`SnapshotError` unless its status is in ``ok``.

        While another process holds ``index_lock`` the command is retried for ~2 s; a lock
        older than ten minutes (left by a crash) is then removed and the command run once more.
        """
        work_tree = env.get("GIT_WORK_TREE")
        avoid = sorted({*self._avoid, *([work_tree] if work_tree else [])})
        for attempt in range(_LOCK_RETRIES + 2):
            done = run_git(
                args,
                cwd=cwd,
                avoid=avoid,
                locations=env,
                stdin=stdin,
                timeout=self._timeout if timeout is None else timeout,
                path=env.get("PATH", os.defpath),
                executable=self._executable,
            )
            if isinstance(done, GitFailure):
                raise SnapshotError(f"snapshots need git: {done.reason}")
            proc = done
            locked = index_lock is not None and b".lock': File exists" in proc.stderr
            if proc.returncode != 0 and locked and index_lock is not None:
                if attempt < _LOCK_RETRIES:
                    time.sleep(_LOCK_WAIT)
                    continue
                if _remove_stale_lock(index_lock):
                    continue
            if proc.returncode in ok:
                return proc
            break
        message = proc.stderr.decode("utf-8", errors="replace").strip()
        raise SnapshotError(f"git {args[0]} failed (exit {proc.returncode}): {message[:2000]}")


@attrs.frozen(kw_only=True)
class _Project:
    """The git repository a workspace folder belongs to."""

    top: Path
    git_dir: Path
    """Its (per-worktree) git dir: where its index is."""
    common_dir: Path
    """Its common git dir: objects, info/exclude."""
    object_format: str


class ShadowRepo:
    """The shadow repository of one workspace folder. Not thread-safe: use one at a time."""

    def __init__(
        self,
        *,
        workspace: Path,
        git_dir: Path,
        project: _Project | None,
        runner: GitRunner,
        base_env: Mapping[str, str],
        clock: Callable[[], float],
        extra_excludes: bytes,
        large_file_limit: int,
        config_args: Sequence[str] = (),
    ) -> None:
        self.workspace = workspace
        self._config_args = tuple(config_args)
        self.git_dir = git_dir
        self.project = project
        self.top = project.top if project else workspace
        self._runner = runner
        self._clock = clock
        self._extra_excludes = extra_excludes
        self._large_file_limit = large_file_limit
        self._index = git_dir / "index"
        self._project_env = dict(base_env)
        self._env = {
            **base_env,
            "GIT_DIR": str(git_dir),
            "GIT_WORK_TREE": str(self.top),
            "GIT_INDEX_FILE": str(self._index),
        }
        self._tree: str | None = None
        self._index_sig: _Sig | None = None
        self._exclude_sig: _Sig | Literal[False] | None = False  # False: never synced
        self._logged_tree: str | None = None
        self._logged_at = 0.0
        self._large: dict[str, tuple[_Sig | None, bool]] = {}
        self._large_index_sig: _Sig | None = None
        self._rebuilding = False
        self._protected_seen: dict[tuple[str, _Sig, int], bytes] = {}
        self._protected_applied: dict[bytes, bytes] | None = None
        """Full path → the index line last put in the shadow index for a protected file
        (None: not known yet — read from the index at the first step)."""

    # -- recording --------------------------------------------------------------------------

    def track(self, overlay: Mapping[str, str] | None = None) -> str:
        """Record the workspace's current files; answer the tree id.

        ``overlay`` maps absolute (resolved) paths to the text an editor's buffer holds for
        them: a file the snapshot records gets that text instead of its bytes on disk. The
        overlay never adds a file nor keeps one that is gone from disk, and paths outside the
        workspace, ignored files, untracked large files and symlinks are not overlaid.
        """
        files = self._track_files()
        if not overlay:
            return files
        tree = self._overlaid(files, overlay)
        if tree != files:
            self._log_tree(tree)
        return tree

    def _track_files(self) -> str:
        """The tree of the files on disk (the shadow index follows them)."""
        rules_changed = self._sync_exclude()
        listed = self._git("ls-files", "-z", "-t", "-o", "-m", "-d", "--exclude-standard").stdout
        changed: dict[str, bytes] = {}
        large: list[str] = []
        skipped: list[str] = []
        for entry in listed.split(b"\0"):
            if len(entry) < 3:
                continue
            tag, raw = entry[:1], entry[2:]
            if raw.endswith(b"/"):  # a nested repository: not snapshotted
                skipped.append(os.fsdecode(raw[:-1]))
                continue
            path = os.fsdecode(raw)
            if path == DOTGIT or path.startswith(f"{DOTGIT}/"):
                continue  # ours (the protected .git files): never on disk under that name
            if tag == b"?" and self._too_large(path):
                large.append(path)
            else:
                changed.setdefault(path, tag)
                rules_changed = rules_changed or path.rsplit("/", 1)[-1] == ".gitignore"
        if large and self.project is not None:
            tracked = self._tracked_by_project(large)
            for path in large:
                if path in tracked:
                    changed.setdefault(path, b"?")
        skipped += [p for p in large if p not in changed]
        protected = self._protected_entries()
        applied = self._protected_applied
        fresh = applied is None or protected != list(applied.values())
        if (
            not changed
            and not fresh
            and self._tree is not None
            and _sig(self._index) == self._index_sig
        ):
            return self._remember(self._tree)
        if changed:
            self._stage(changed, skipped)
        if rules_changed:
            self._drop_ignored()
            self._protected_applied = {}  # ignored protected files may have been dropped
        self._apply_protected(protected)
        return self._remember(self._write_tree())

    def _stage(self, changed: dict[str, bytes], skipped: Sequence[str]) -> None:
        """Bring the listed paths into the shadow index.

        A short list goes to ``git update-index`` (no folder scan; a path gone by now is simply
        skipped); a long one to ``git add -A .`` minus ``skipped``. If update-index refuses
        (a file that became a folder, an unreadable file), ``git add --ignore-errors`` does it.
        A path under a folder that became a symlink is gone from the work tree (git refuses
        to look "beyond a symbolic link"): it is dropped from the index, and the link itself
        is recorded as a link — a snapshot never follows it.
        """
        beyond = self._beyond_links(changed)
        if beyond:
            self._git(
                "update-index", "--force-remove", "-z", "--stdin",
                stdin=b"\0".join(os.fsencode(p) for p in beyond),
            )  # fmt: skip
            changed = {p: tag for p, tag in changed.items() if p not in beyond}
            if not changed:
                return
        if len(changed) > _MANY_PATHS:
            excludes = [f":(exclude,literal){p}" for p in [*skipped, DOTGIT]]
            proc = self._git("add", "-A", "--ignore-errors", "--", ".", *excludes, ok=(0, 1))
        else:
            listed = b"\0".join(os.fsencode(p) for p in changed)
            proc = self._git(
                "update-index",
                "--add",
                "--remove",
                "--replace",
                "-z",
                "--stdin",
                stdin=listed,
                ok=range(256),
            )
            if proc.returncode == 0:
                return
            present = [p for p, tag in changed.items() if tag != b"?" or self._exists(p)]
            if not present:
                return
            proc = self._git(
                "--literal-pathspecs", "add", "-A", "--ignore-errors",
                "--pathspec-from-file=-", "--pathspec-file-nul",
                stdin=b"\0".join(os.fsencode(p) for p in present), ok=(0, 1),
            )  # fmt: skip
        if proc.returncode == 1:
            _log.warning("snapshot: some files could not be read: %s", _text(proc.stderr))

    def _write_tree(self) -> str:
        proc = self._git("write-tree", ok=(0, 128))
        if proc.returncode == 0:
            return proc.stdout.decode().strip()
        if self._rebuilding:
            raise SnapshotError(f"git write-tree failed: {_text(proc.stderr)}")
        # The index names an object that is gone (say, the project pruned one our copy of its
        # index still used): start a fresh index and hash everything once.
        _log.warning("snapshot index of %s rebuilt: %s", self.workspace, _text(proc.stderr))
        self._index.unlink(missing_ok=True)
        self._tree = None
        self._protected_applied = {}
        self._rebuilding = True
        try:
            return self._track_files()
        finally:
            self._rebuilding = False

    def _remember(self, tree: str) -> str:
        self._tree = tree
        self._index_sig = _sig(self._index)
        self._log_tree(tree)
        return tree

    def _log_tree(self, tree: str) -> None:
        """Note ``tree`` in the trees log (pruning keeps what was logged recently)."""
        now = self._clock()
        if tree != self._logged_tree or now - self._logged_at >= _LOG_REFRESH:
            with open(self.git_dir / layout.TREES_LOG, "a", encoding="ascii") as log:
                log.write(f"{int(now)} {tree}\n")
            self._logged_tree, self._logged_at = tree, now

    # -- protected files --------------------------------------------------------------------

    def _protected_entries(self) -> list[bytes]:
        """Index lines for the protected files at the workspace's top
        (``core/permission/protected.py``), recorded even where git cannot or would not:
        ``.git/config``, ``.git/hooks/**`` and ``.git/info/**`` (under :data:`DOTGIT` in the
        tree, since git keeps no ``.git`` path) and ignored ones (``.vscode/``, ``.envrc``…).
        A file's blob is written once per version (its stat data says when it changed)."""
        start = str(self.workspace)
        lines: list[bytes] = []
        seen: dict[tuple[str, _Sig, int], bytes] = {}
        for tree_path, path, st in _protected_files(self.workspace):
            key = (tree_path, _stat_sig(st), st.st_mode)
            line = self._protected_seen.get(key)
            if line is None:
                try:
                    if stat.S_ISLNK(st.st_mode):
                        data, mode = os.fsencode(os.readlink(path)), b"120000"
                    else:
                        data = beneath.read_bytes(path, start=start) or b""
                        mode = b"100755" if st.st_mode & 0o100 else b"100644"
                except OSError:
                    continue
                written = self._git("hash-object", "-w", "--no-filters", "--stdin", stdin=data)
                full = os.fsencode(self._prefix + tree_path)
                line = mode + b" " + written.stdout.strip() + b"\t" + full
            seen[key] = line
            lines.append(line)
        self._protected_seen = seen
        return lines

    def _indexed_dotgit(self) -> dict[bytes, bytes]:
        """The ``DOTGIT`` entries the shadow index holds (left by an earlier process)."""
        out = self._git("ls-files", "-s", "-z", "--full-name", "--", DOTGIT).stdout
        found: dict[bytes, bytes] = {}
        for entry in out.split(b"\0"):
            meta, tab, path = entry.partition(b"\t")
            fields = meta.split()
            if tab and len(fields) == 3:
                found[path] = fields[0] + b" " + fields[1] + b"\t" + path
        return found

    def _apply_protected(self, lines: Sequence[bytes]) -> None:
        """Put the protected files' entries in the shadow index (``--index-info``), removing
        the ones that are gone; nothing when they are as last put there. They live in the
        index like any file, but git never lists them as changed: ``DOTGIT`` paths are
        skipped when reading ``ls-files`` and left out of ``add -A``."""
        wanted = {line.partition(b"\t")[2]: line for line in lines}
        if self._protected_applied is None:
            self._protected_applied = self._indexed_dotgit()
        if wanted == self._protected_applied:
            return
        removals = [
            b"0 " + b"0" * len(line.split(b" ", 2)[1].partition(b"\t")[0]) + b"\t" + path
            for path, line in self._protected_applied.items()
            if path not in wanted
        ]
        new = [line for path, line in wanted.items() if self._protected_applied.get(path) != line]
        self._git("update-index", "-z", "--index-info", stdin=b"\0".join([*removals, *new]) + b"\0")
        self._protected_applied = wanted

    # -- open buffers -----------------------------------------------------------------------

    def _overlaid(self, files: str, overlay: Mapping[str, str]) -> str:
        """``files`` (the tree just recorded) with the overlay's text for the files it has.

        Only buffers that differ from the recorded bytes cost anything beyond one
        ``git ls-files``: their blobs are written and a tree is made from a scratch copy of
        the shadow index (which itself keeps following the disk).
        """
        wanted = self._overlay_data(overlay)
        if not wanted:
            return files
        changed: list[bytes] = []
        for mode, blob, full in self._index_entries(list(wanted)):
            rel = self._relative(full)
            data = wanted.get(rel) if rel is not None else None
            if data is None or mode not in (b"100644", b"100755"):
                continue
            if self._blob_id(data) == blob:
                continue
            written = self._git("hash-object", "-w", "--no-filters", "--stdin", stdin=data)
            new_blob = written.stdout.strip()
            changed.append(mode + b" " + new_blob + b"\t" + os.fsencode(full))
        if not changed:
            return files
        scratch = self.git_dir / f"overlay-{os.getpid()}-{secrets.token_hex(4)}.index"
        env = {**self._env, "GIT_INDEX_FILE": str(scratch)}
        try:
            shutil.copyfile(self._index, scratch)
            self._runner.run(
                ["update-index", "-z", "--index-info"],
                cwd=self.workspace,
                env=env,
                stdin=b"\0".join(changed) + b"\0",
            )
            proc = self._runner.run(["write-tree"], cwd=self.workspace, env=env)
        except OSError as exc:
            raise SnapshotError(f"could not record the open buffers: {exc}") from exc
        finally:
            scratch.unlink(missing_ok=True)
            Path(f"{scratch}.lock").unlink(missing_ok=True)
        return proc.stdout.decode().strip()

    def _overlay_data(self, overlay: Mapping[str, str]) -> dict[str, bytes]:
        """Relative path → the bytes the buffer's text stands for, for paths inside the
        workspace (UTF-8, ``surrogateescape``; the disk's BOM kept when the buffer has none,
        as an editor saving it would)."""
        found: dict[str, bytes] = {}
        for key, text in overlay.items():
            path = PurePosixPath(key.replace(os.sep, "/"))
            try:
                rel = relative_path(path.relative_to(self.workspace.as_posix()).as_posix())
            except (ValueError, SnapshotError):
                continue
            if rel == ".":
                continue
            data = text.encode("utf-8", errors="surrogateescape")
            if not data.startswith(_BOM) and self._starts_with_bom(rel):
                data = _BOM + data
            found[rel] = data
        return found

    def _starts_with_bom(self, rel: str) -> bool:
        try:
            with open(self.workspace / rel, "rb") as f:
                return f.read(len(_BOM)) == _BOM
        except OSError:
            return False

    def _index_entries(self, paths: Sequence[str]) -> list[tuple[bytes, bytes, str]]:
        """(mode, blob id, path from the work tree's top) of the shadow index's entries."""
        entries: list[tuple[bytes, bytes, str]] = []
        for start in range(0, len(paths), _BATCH):
            out = self._git(
                "--literal-pathspecs", "ls-files", "-s", "-z", "--full-name",
                "--", *paths[start : start + _BATCH],
            ).stdout  # fmt: skip
            for entry in out.split(b"\0"):
                meta, tab, raw = entry.partition(b"\t")
                fields = meta.split()
                if tab and len(fields) == 3 and fields[2] == b"0":
                    entries.append((fields[0], fields[1], os.fsdecode(raw)))
        return entries

    def _blob_id(self, data: bytes) -> bytes:
        algorithm = self.project.object_format if self.project else "sha1"
        digest = hashlib.new(algorithm, b"blob %d\0" % len(data))
        digest.update(data)
        return digest.hexdigest().encode()

    @property
    def _prefix(self) -> str:
        """The workspace's path from the work tree's top, ``/``-terminated ("" at the top)."""
        inside = self.workspace.relative_to(self.top).as_posix()
        return "" if inside == "." else f"{inside}/"

    def _relative(self, full: str) -> str | None:
        """A path from the work tree's top, relative to the workspace (None: outside it)."""
        prefix = self._prefix
        return full[len(prefix) :] if full.startswith(prefix) else None

    def read(self, tree: str, path: str) -> bytes | None:
        """The bytes of the regular file ``path`` in ``tree``; None if it has none there."""
        full = self._prefix + tree_path(relative_path(path))
        out = self._git(
            "--literal-pathspecs", "ls-tree", "-z", "--full-tree", _tree_id(tree), "--", full
        ).stdout
        for entry in out.split(b"\0"):
            meta, tab, raw = entry.partition(b"\t")
            fields = meta.split()
            if (
                tab
                and os.fsdecode(raw) == full
                and len(fields) == 3
                and fields[0] in (b"100644", b"100755")
            ):
                return self._git("cat-file", "blob", fields[2].decode()).stdout
        return None

    def _too_large(self, path: str) -> bool:
        try:
            st = os.lstat(self.workspace / path)
        except OSError:
            return False
        return stat.S_ISREG(st.st_mode) and st.st_size > self._large_file_limit

    def _tracked_by_project(self, paths: Sequence[str]) -> set[str]:
        """Which of ``paths`` (large, untracked here) the project's own index tracks.

        Remembered per file (until it or the project's index changes): large untracked files
        show up at every step.
        """
        assert self.project is not None
        index_sig = _sig(self.project.git_dir / "index")
        if index_sig != self._large_index_sig:
            self._large.clear()
            self._large_index_sig = index_sig
        sigs = {p: _sig(self.workspace / p) for p in paths}
        unknown = [p for p in paths if self._large.get(p, (None, False))[0] != sigs[p]]
        if unknown:
            tracked = self._project_tracks(unknown)
            for path in unknown:
                self._large[path] = (sigs[path], path in tracked)
        return {p for p in paths if self._large[p][1]}

    def _project_tracks(self, paths: Sequence[str]) -> set[str]:
        """Which of ``paths`` are in the project's own index (read only)."""
        tracked: set[str] = set()
        for start in range(0, len(paths), _BATCH):
            proc = self._runner.run(
                ["--literal-pathspecs", "ls-files", "-z", "--", *paths[start : start + _BATCH]],
                cwd=self.workspace,
                env=self._project_env,
            )
            tracked.update(os.fsdecode(p) for p in proc.stdout.split(b"\0") if p)
        return tracked

    def _drop_ignored(self) -> None:
        """Stop recording files the ignore rules now exclude (a ``.gitignore`` changed).

        Files the project itself tracks stay, as they do for git.
        """
        listed = self._git("ls-files", "-z", "-c", "-i", "--exclude-standard").stdout
        paths = [os.fsdecode(p) for p in listed.split(b"\0") if p]
        if paths and self.project is not None:
            kept = self._project_tracks(paths)
            paths = [p for p in paths if p not in kept]
        if paths:
            self._git(
                "update-index", "--force-remove", "-z", "--stdin",
                stdin=b"\0".join(os.fsencode(p) for p in paths),
            )  # fmt: skip

    def _sync_exclude(self) -> bool:
        """Copy the project's ``info/exclude`` (plus our own lines); whether it changed."""
        source = self.project.common_dir / "info" / "exclude" if self.project else None
        sig = _sig(source) if source else None
        if sig == self._exclude_sig:
            return False
        body = b""
        if source is not None and sig is not None:
            body = read_regular_file(source, _TEXT_LIMIT) or b""
        if body and not body.endswith(b"\n"):
            body += b"\n"
        body += self._extra_excludes
        target = self.git_dir / "info" / "exclude"
        try:
            current = target.read_bytes()
        except OSError:
            current = None
        self._exclude_sig = sig
        if current == body:
            return False
        write_atomic(target, body)
        return current is not None

    # -- comparing --------------------------------------------------------------------------

    def diff(self, from_tree: str, to_tree: str) -> list[FileChange]:
        """The files that differ between two trees, with line counts, in path order."""
        out = self._git(
            "diff-tree", "-r", "-z", "--no-renames", "--relative", "--raw", "--numstat",
            _tree_id(from_tree), _tree_id(to_tree), "--", ".",
        ).stdout  # fmt: skip
        statuses: dict[str, ChangeStatus] = {}
        counts: dict[str, tuple[int, int, bool]] = {}
        parts = out.split(b"\0")
        i = 0
        while i < len(parts):
            token = parts[i]
            i += 1
            if not token:
                continue
            if token.startswith(b":"):
                path = os.fsdecode(parts[i])
                i += 1
                statuses[path] = _status(token.split()[-1][:1])
                continue
            added, deleted, raw_path = token.split(b"\t", 2)
            binary = added == b"-"
            counts[os.fsdecode(raw_path)] = (
                0 if binary else int(added),
                0 if binary else int(deleted),
                binary,
            )
        return [
            FileChange(
                path=disk_path(path),
                status=status,
                additions=counts.get(path, (0, 0, False))[0],
                deletions=counts.get(path, (0, 0, False))[1],
                binary=counts.get(path, (0, 0, False))[2],
            )
            for path, status in statuses.items()
        ]

    def patch(self, from_tree: str, to_tree: str) -> str:
        """A unified diff (3 lines of context) from one tree to the other."""
        out = self._git(
            "diff-tree", "-p", "-r", "--no-renames", "--relative",
            _tree_id(from_tree), _tree_id(to_tree), "--", ".",
        ).stdout  # fmt: skip
        text = out.decode("utf-8", errors="replace")
        return text.replace(f"a/{DOTGIT}/", "a/.git/").replace(f"b/{DOTGIT}/", "b/.git/")

    def changed_since(
        self, tree: str, paths: Sequence[str], overlay: Mapping[str, str] | None = None
    ) -> list[str]:
        """Which of ``paths`` (files or folders) differ now from their state in ``tree``
        (a file in ``overlay`` compared by the overlay's text, see :meth:`track`)."""
        tree = _tree_id(tree)
        wanted = {p: tree_path(relative_path(p)) for p in paths}
        if not wanted:
            return []
        now = self.track(overlay)
        if now == tree:
            return []
        differing = [p for _, p in self._changes(now, tree, list(dict.fromkeys(wanted.values())))]
        return [p for p, rel in wanted.items() if any(_covers(rel, d) for d in differing)]

    # -- restoring --------------------------------------------------------------------------

    def restore(self, tree: str, paths: Sequence[str] | None = None) -> list[str]:
        """Make ``paths`` (or every recorded path) in the workspace match ``tree``.

        Files that differ are rewritten, files ``tree`` does not have are deleted (with the
        folders they leave empty), missing ones are brought back. Ignored files, untracked large
        files and nested repositories are never part of a tree, so they are left alone. Answers
        the paths changed, sorted.
        """
        tree = _tree_id(tree)
        scope = (
            ["."]
            if paths is None
            else list(dict.fromkeys(tree_path(relative_path(p)) for p in paths))
        )
        if not scope:
            return []
        now = self.track()
        if now == tree:
            return []
        changes = self._changes(now, tree, scope)
        done: list[str] = []
        for status, path in changes:
            if status == "delete" and self._delete(path):
                done.append(path)
        writes = [p for status, p in changes if status != "delete" and self._clear_way(p)]
        if writes:
            self._checkout(tree, writes)
            done += writes
        if done:
            self.track()
        return sorted(disk_path(p) for p in done)

    def _changes(
        self, from_tree: str, to_tree: str, scope: Sequence[str]
    ) -> list[tuple[ChangeStatus, str]]:
        """(status, path) of each file that differs, submodules left out."""
        found: list[tuple[ChangeStatus, str]] = []
        for start in range(0, len(scope), _BATCH):
            out = self._git(
                "--literal-pathspecs", "diff-tree", "-r", "-z", "--no-renames", "--relative",
                from_tree, to_tree, "--", *scope[start : start + _BATCH],
            ).stdout  # fmt: skip
            parts = out.split(b"\0")
            for i in range(0, len(parts) - 1, 2):
                meta, raw_path = parts[i], parts[i + 1]
                fields = meta.split()
                if len(fields) < 5 or _SUBMODULE in (fields[0][1:], fields[1]):
                    continue
                found.append((_status(fields[4][:1]), os.fsdecode(raw_path)))
        return sorted(set(found), key=lambda change: change[1])

    def _checkout(self, tree: str, paths: Sequence[str]) -> None:
        """Write ``paths`` as ``tree`` has them.

        The bytes come from git (``ls-tree`` and ``cat-file``), but the agent writes them
        itself (``system.beneath``): every folder from the workspace down is opened without
        following a link, so a folder swapped for a symlink is never written through — the
        file under it is skipped (logged) and the restore goes on with the others.
        """
        start = str(self.workspace)
        entries = self._tree_entries(tree, paths)
        blobs = self._blobs(sorted({oid for _, oid in entries.values()}))
        for path in paths:
            entry = entries.get(path)
            if entry is None:
                continue
            mode, oid = entry
            target = str(self.workspace / disk_path(path))
            data = blobs[oid]
            try:
                if mode == b"120000":
                    with contextlib.suppress(FileNotFoundError):
                        found = beneath.lstat(target, start=start)
                        if found is not None and not stat.S_ISDIR(found.st_mode):
                            beneath.unlink(target, start=start)
                    beneath.makedirs(os.path.dirname(target), start=start)
                    beneath.symlink(os.fsdecode(data), target, start=start)
                else:
                    beneath.write_atomic(
                        target, data, start=start, make=create_temp_at,
                        executable=mode == b"100755",
                    )  # fmt: skip
            except OSError as error:
                _log.warning("snapshot restore: %s not written: %s", target, error.strerror)

    def _tree_entries(self, tree: str, paths: Sequence[str]) -> dict[str, tuple[bytes, str]]:
        """Relative path → (mode, blob id) in ``tree`` for the regular files and links of
        ``paths``."""
        prefix = self._prefix
        found: dict[str, tuple[bytes, str]] = {}
        for begin in range(0, len(paths), _BATCH):
            chunk = [prefix + p for p in paths[begin : begin + _BATCH]]
            out = self._git(
                "--literal-pathspecs", "ls-tree", "-z", "--full-tree", tree, "--", *chunk
            ).stdout
            for item in out.split(b"\0"):
                meta, tab, raw = item.partition(b"\t")
                fields = meta.split()
                if tab and len(fields) == 3 and fields[0] in (b"100644", b"100755", b"120000"):
                    full = os.fsdecode(raw)
                    if full.startswith(prefix):
                        found[full[len(prefix) :]] = (fields[0], fields[2].decode())
        return found

    def _blobs(self, oids: Sequence[str]) -> dict[str, bytes]:
        """The bytes of each blob, read in one ``git cat-file --batch``."""
        if not oids:
            return {}
        out = self._git("cat-file", "--batch", stdin="".join(f"{o}\n" for o in oids).encode())
        data = out.stdout
        blobs: dict[str, bytes] = {}
        at = 0
        for _ in oids:
            header_end = data.index(b"\n", at)
            fields = data[at:header_end].split()
            if len(fields) != 3:
                raise SnapshotError(f"git cat-file: unexpected answer {data[at:header_end]!r}")
            size = int(fields[2])
            blobs[fields[0].decode()] = data[header_end + 1 : header_end + 1 + size]
            at = header_end + 1 + size + 1
        return blobs

    def _delete(self, path: str) -> bool:
        """Remove ``path`` (and the folders it leaves empty), every folder on the way reached
        from the workspace without following a link (``system.beneath``). Folders of
        ``.git`` are never removed."""
        if disk_path(path) == ".git/config":
            return False  # a repository without it is broken: a revert rewrites, never deletes
        target = self.workspace / disk_path(path)
        start = str(self.workspace)
        try:
            found = beneath.lstat(str(target), start=start)
            if found is None or stat.S_ISDIR(found.st_mode):
                return False
            beneath.unlink(str(target), start=start)
        except FileNotFoundError:
            return False
        except OSError as error:
            _log.warning("snapshot restore: not deleting %s: %s", target, error.strerror)
            return False
        parent = target.parent
        while parent != self.workspace and self.workspace in parent.parents:
            if parent.relative_to(self.workspace).parts[0] == ".git":
                break
            try:
                beneath.rmdir(str(parent), start=start)
            except OSError:
                break
            parent = parent.parent
        return True

    def _clear_way(self, path: str) -> bool:
        """Whether ``path`` can be written: a folder in its place must be empty (then removed)."""
        target = self.workspace / disk_path(path)
        start = str(self.workspace)
        try:
            found = beneath.lstat(str(target), start=start)
        except OSError:
            return True
        if found is None or not stat.S_ISDIR(found.st_mode):
            return True
        for root, dirs, _files in os.walk(target, topdown=False):
            for name in dirs:
                with contextlib.suppress(OSError):
                    beneath.rmdir(os.path.join(root, name), start=start)
        try:
            beneath.rmdir(str(target), start=start)
        except OSError:
            _log.warning("snapshot restore: %s is a folder with files in it; left alone", target)
            return False
        return True

    def _beyond_links(self, paths: Iterable[str]) -> set[str]:
        """The ``paths`` (relative) with a symlink or a non-folder among their parents."""
        plain: dict[str, bool] = {}
        beyond: set[str] = set()
        for path in paths:
            parts = path.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                folder = "/".join(parts[:depth])
                if folder not in plain:
                    try:
                        plain[folder] = stat.S_ISDIR(os.lstat(self.workspace / folder).st_mode)
                    except OSError:
                        plain[folder] = True  # missing: git skips it by itself
                if not plain[folder]:
                    beyond.add(path)
                    break
        return beyond

    def _exists(self, path: str) -> bool:
        return os.path.lexists(self.workspace / path)

    def _git(self, *args: str, stdin: bytes | None = None, ok: Collection[int] = (0,)) -> GitResult:
        return self._runner.run(
            (*self._config_args, *args),
            cwd=self.workspace,
            env=self._env,
            stdin=stdin,
            ok=ok,
            index_lock=self._lock,
        )

    @property
    def _lock(self) -> Path:
        return self.git_dir / "index.lock"


# -- opening ------------------------------------------------------------------------------------


def open_shadow(
    *,
    data_dir: Path,
    workspace: Path,
    runner: GitRunner,
    base_env: Mapping[str, str],
    clock: Callable[[], float],
    large_file_limit: int = LARGE_FILE_LIMIT,
) -> ShadowRepo:
    """The shadow repository of ``workspace`` (resolved), created or reset as needed."""
    if not workspace.is_dir():
        raise SnapshotError(f"not a folder: {workspace}")
    if ".git" in workspace.parts:
        raise SnapshotError(f"refusing to snapshot inside a .git folder: {workspace}")
    env = clean_environment(base_env)
    runner.avoid(workspace)
    project = _discover(runner, workspace, env)
    if project is not None:
        runner.avoid(project.top)
    git_dir = layout.shadow_dir(data_dir, workspace)
    setup = {
        "version": _SETUP_VERSION,
        "workspace": str(workspace),
        "top": str(project.top if project else workspace),
        "objects": str(project.common_dir / "objects") if project else None,
        "object_format": project.object_format if project else "sha1",
    }
    existing = _read_setup(git_dir)
    if existing is None or any(existing.get(k) != setup[k] for k in _SETUP_FIXED):
        if git_dir.exists():
            _log.info("snapshot repository %s set up anew", git_dir)
            shutil.rmtree(git_dir, ignore_errors=True)
        _create(runner, git_dir, setup, project, env)
    elif existing != setup:
        _adopt(git_dir, existing, setup, project)
    top = project.top if project else workspace
    return ShadowRepo(
        workspace=workspace,
        git_dir=git_dir,
        project=project,
        runner=runner,
        base_env=env,
        clock=clock,
        extra_excludes=_exclude_line(data_dir, top),
        large_file_limit=large_file_limit,
        config_args=_user_excludes_args(runner, git_dir, base_env),
    )


def _home_path(value: str, env: Mapping[str, str]) -> str:
    """``~/…`` expanded with the user's home (git runs with an empty one of its own)."""
    if value == "~" or value.startswith("~/"):
        return (env.get("HOME") or os.path.expanduser("~")) + value[1:]
    return value


def _user_excludes_args(runner: GitRunner, git_dir: Path, base_env: Mapping[str, str]) -> list[str]:
    """``-c core.excludesFile=…`` for the user's global excludes file, which git no longer
    finds itself (it runs without the user's configuration and with an empty ``HOME``):
    ``core.excludesFile`` of ``~/.gitconfig`` or ``$XDG_CONFIG_HOME/git/config`` (read with
    ``git config --file``, which runs nothing), else ``$XDG_CONFIG_HOME/git/ignore``. None
    when the shadow's own config names one (the project's)."""
    shadow_config = read_regular_file(git_dir / "config", _TEXT_LIMIT) or b""
    if b"excludesfile" in shadow_config.lower():
        return []
    home = base_env.get("HOME") or os.path.expanduser("~")
    xdg = Path(base_env.get("XDG_CONFIG_HOME") or Path(home) / ".config")
    found: str | None = None
    for config in (xdg / "git" / "config", Path(home) / ".gitconfig"):
        text = read_regular_file(config, _TEXT_LIMIT)
        if text is None or b"excludesfile" not in text.lower():
            continue
        proc = runner.run(
            ["config", "--file", str(config), "--get", "core.excludesFile"],
            cwd=git_dir,
            env={},
            ok=(0, 1),
        )
        value = _home_path(os.fsdecode(proc.stdout.rstrip(b"\n")), base_env)
        if proc.returncode == 0 and value and "\n" not in value:
            found = value
    if found is None and (xdg / "git" / "ignore").is_file():
        found = str(xdg / "git" / "ignore")
    return ["-c", f"core.excludesFile={found}"] if found else []


def _discover(runner: GitRunner, workspace: Path, env: Mapping[str, str]) -> _Project | None:
    """The git repository ``workspace`` is part of, unless there is none or it ignores it
    (or git could not open its files without blocking: then it is treated as none)."""
    unusable = unusable_repository_files(workspace)
    if unusable:
        _log.warning("snapshots of %s ignore its repository: not regular files: %s",
                     workspace, ", ".join(unusable))  # fmt: skip
        return None
    proc = runner.run(
        ["rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir", "--show-object-format"],
        cwd=workspace,
        env=env,
        ok=range(256),
    )
    lines = proc.stdout.split(b"\n")
    if proc.returncode != 0 or len(lines) < 4 or not lines[0]:
        return None
    top = Path(os.fsdecode(lines[0])).resolve()
    project = _Project(
        top=top,
        git_dir=(workspace / os.fsdecode(lines[1])).resolve(),
        common_dir=(workspace / os.fsdecode(lines[2])).resolve(),
        object_format=lines[3].decode().strip() or "sha1",
    )
    if top == workspace:
        return project
    try:
        inside = workspace.relative_to(top).as_posix()
    except ValueError:
        return None
    ignored = runner.run(
        ["check-ignore", "-q", "--", f"{inside}/"], cwd=top, env=env, ok=range(256)
    )
    return None if ignored.returncode == 0 else project


def _adopt(
    git_dir: Path, old: dict[str, Any], setup: dict[str, Any], project: _Project | None
) -> None:
    """The folder became (or stopped being) part of a git repository: keep the snapshots.

    Only where objects are borrowed from changes (a tree naming a borrowed object that is
    gone can no longer be restored, and the index is rebuilt when it names one); when the work
    tree's top moved, the index (whose paths start there) starts again.
    """
    _log.info("snapshot repository %s follows its folder's new git setup", git_dir)
    try:
        alternates = git_dir / "objects" / "info" / "alternates"
        if project is None:
            alternates.unlink(missing_ok=True)
        else:
            write_atomic(alternates, f"{project.common_dir / 'objects'}\n".encode())
        if old.get("top") != setup["top"]:
            (git_dir / "index").unlink(missing_ok=True)
        write_atomic(git_dir / layout.WORKSPACE_FILE, json.dumps(setup, indent=2).encode())
    except OSError as exc:
        raise SnapshotError(f"could not update the snapshot repository {git_dir}: {exc}") from exc


def _read_setup(git_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((git_dir / layout.WORKSPACE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and (git_dir / "HEAD").is_file() else None


def _create(
    runner: GitRunner,
    git_dir: Path,
    setup: dict[str, Any],
    project: _Project | None,
    env: Mapping[str, str],
) -> None:
    """Make the shadow dir in a temporary place, then move it into place whole."""
    root = git_dir.parent
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".new-{git_dir.name}-", dir=root))
    try:
        fmt = str(setup["object_format"])
        init = ["init", "--bare", "--quiet", "--template="]
        if fmt != "sha1":
            init.append(f"--object-format={fmt}")
        runner.run([*init, str(temp)], cwd=root, env=env)
        config = _CONFIG
        if os.name != "nt":
            config += "[core]\n\tsymlinks = true\n"
        if project is not None:
            config += _excludes_file_setting(runner, project, env)
        with open(temp / "config", "a", encoding="utf-8") as f:
            f.write(config)
        (temp / "info").mkdir(exist_ok=True)
        (temp / "info" / "attributes").write_bytes(_ATTRIBUTES)
        if project is not None:
            alternates = temp / "objects" / "info" / "alternates"
            alternates.parent.mkdir(parents=True, exist_ok=True)
            alternates.write_text(f"{project.common_dir / 'objects'}\n", encoding="utf-8")
            _seed_index(runner, temp, project, env)
        (temp / layout.WORKSPACE_FILE).write_text(json.dumps(setup, indent=2), encoding="utf-8")
        try:
            os.rename(temp, git_dir)
        except OSError:
            if not (git_dir / "HEAD").is_file():
                raise
            # Another process made it first: use theirs.
    except OSError as exc:
        raise SnapshotError(f"could not create the snapshot repository {git_dir}: {exc}") from exc
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _excludes_file_setting(runner: GitRunner, project: _Project, env: Mapping[str, str]) -> str:
    """The project's own ``core.excludesFile`` (set in its config) for the shadow's config."""
    data = read_regular_file(project.common_dir / "config", _TEXT_LIMIT)
    if data is None:
        return ""
    text = data.decode("utf-8", errors="replace")
    if "excludesfile" not in text.lower():
        return ""
    proc = runner.run(["config", "--get", "core.excludesFile"], cwd=project.top, env=env, ok=(0, 1))
    value = _home_path(os.fsdecode(proc.stdout.rstrip(b"\n")), env)
    if proc.returncode != 0 or not value or "\n" in value:
        return ""
    quoted = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'[core]\n\texcludesFile = "{quoted}"\n'


def _seed_index(
    runner: GitRunner, git_dir: Path, project: _Project, env: Mapping[str, str]
) -> None:
    """Start from a copy of the project's index when its entries hash the same for us.

    Its stat data then lets git skip every file the project already hashed. Not done when git
    converts content for the project (end of lines, filters: its blobs would not be the bytes
    on disk), or when entries are marked assume-unchanged / skip-worktree, or the index is
    split or sparse.
    """
    source = project.git_dir / "index"
    seed = git_dir / "index.seed"
    if not copy_regular_file(source, seed, _INDEX_LIMIT):
        return
    try:
        if _seed_is_safe(runner, git_dir, seed, project, env):
            os.replace(seed, git_dir / "index")
    finally:
        seed.unlink(missing_ok=True)


def _seed_is_safe(
    runner: GitRunner, git_dir: Path, seed: Path, project: _Project, env: Mapping[str, str]
) -> bool:
    if _has_content(project.common_dir / "info" / "attributes"):
        return False
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    if _has_content(Path(xdg) / "git" / "attributes"):
        return False
    settings = runner.run(
        ["config", "-z", "--get-regexp", r"^core\.(autocrlf|attributesfile|splitindex)$"],
        cwd=project.top,
        env=env,
        ok=(0, 1),
    )
    for item in settings.stdout.split(b"\0"):
        key, _, value = item.partition(b"\n")
        key, value = key.lower(), value.strip().lower()
        if key == b"core.attributesfile" and value:
            return False
        if key in (b"core.autocrlf", b"core.splitindex") and value not in (b"false", b"no", b"0"):
            return False
    listed = runner.run(
        ["ls-files", "-z", "-v"],
        cwd=project.top,
        env={**env, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(project.top),
             "GIT_INDEX_FILE": str(seed)},
        ok=range(256),
    )  # fmt: skip
    if listed.returncode != 0:
        return False
    for entry in listed.stdout.split(b"\0"):
        if not entry:
            continue
        tag, path = entry[:1], entry[2:]
        if tag.islower() or tag == b"S" or path.rsplit(b"/", 1)[-1] == b".gitattributes":
            return False
    return True


def _has_content(path: Path) -> bool:
    text = read_regular_file(path, _TEXT_LIMIT)
    if text is None:
        return False
    return any(line.strip() and not line.lstrip().startswith(b"#") for line in text.splitlines())


def _exclude_line(data_dir: Path, top: Path) -> bytes:
    """An exclude pattern for the data dir when it lies inside the work tree."""
    try:
        inside = data_dir.resolve().relative_to(top)
    except (OSError, ValueError):
        return b""
    if not inside.parts or "\n" in str(inside):
        return b""
    escaped = re.sub(r"([\\*?\[\]!# ])", r"\\\1", inside.as_posix())
    return os.fsencode(f"/{escaped}/\n")


# -- pruning ------------------------------------------------------------------------------------


def collect_garbage(
    runner: GitRunner,
    git_dir: Path,
    *,
    base_env: Mapping[str, str],
    cutoff: float,
    max_age_days: float,
) -> None:
    """Drop the objects only snapshots older than ``cutoff`` need.

    Trees logged at or after ``cutoff`` (and the shadow index) stay reachable through
    ``refs/keep/*``; ``git gc --prune`` then deletes unreachable objects older than the
    age limit. Objects borrowed from the project are never touched (they are not local).
    """
    env = {**clean_environment(base_env), "GIT_DIR": str(git_dir),
           "GIT_INDEX_FILE": str(git_dir / "index")}  # fmt: skip
    log = git_dir / layout.TREES_LOG
    latest: dict[str, float] = {}
    with contextlib.suppress(OSError):
        for line in log.read_text(encoding="ascii", errors="replace").splitlines():
            when, _, tree = line.partition(" ")
            with contextlib.suppress(ValueError):
                if _TREE_ID.fullmatch(tree):
                    latest[tree] = max(latest.get(tree, 0.0), float(when))
    keep = sorted(t for t, when in latest.items() if when >= cutoff)
    shutil.rmtree(git_dir / _KEEP_REFS, ignore_errors=True)
    (git_dir / "packed-refs").unlink(missing_ok=True)
    present = _existing_trees(runner, git_dir, env, keep)
    if present:
        runner.run(
            ["update-ref", "--stdin"],
            cwd=git_dir,
            env=env,
            stdin="".join(f"create {_KEEP_REFS}/{t} {t}\n" for t in present).encode(),
        )
    write_atomic(
        log, "".join(f"{int(latest[t])} {t}\n" for t in sorted(present, key=latest.__getitem__))
        .encode()
    )  # fmt: skip
    days = f"{max_age_days:g}"
    runner.run(
        ["gc", "--quiet", f"--prune={days}.days.ago"], cwd=git_dir, env=env, timeout=_GC_TIMEOUT
    )


def _existing_trees(
    runner: GitRunner, git_dir: Path, env: Mapping[str, str], trees: Iterable[str]
) -> list[str]:
    wanted = list(trees)
    if not wanted:
        return []
    proc = runner.run(
        ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
        cwd=git_dir,
        env=env,
        stdin="".join(f"{t}\n" for t in wanted).encode(),
    )
    found = []
    for line in proc.stdout.decode(errors="replace").splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[1] == "tree":
            found.append(fields[0])
    return found


# -- helpers ------------------------------------------------------------------------------------


def relative_path(path: str) -> str:
    """``path`` checked to be inside the workspace, as a ``/``-separated relative path.

    ``.git`` is refused except for the parts a snapshot records (``.git/config``,
    ``.git/hooks/…``, ``.git/info/…`` at the top, :func:`tree_path`)."""
    if not path or "\0" in path:
        raise SnapshotError(f"not a usable path: {path!r}")
    pure = PurePosixPath(path.replace(os.sep, "/"))
    parts = pure.parts
    kept = len(parts) >= 2 and parts[0] == ".git" and parts[1] in _GIT_KEPT
    if pure.is_absolute() or ".." in parts or ".git" in (parts[1:] if kept else parts):
        raise SnapshotError(f"not a path inside the workspace: {path!r}")
    if kept and ".git" in parts[1:]:
        raise SnapshotError(f"not a path inside the workspace: {path!r}")
    return pure.as_posix()


DOTGIT = ".lsp-agent-dotgit"
"""Where a snapshot tree keeps the workspace's ``.git/config``, ``hooks`` and ``info`` (git
refuses a ``.git`` path in a tree)."""
_GIT_KEPT = ("config", "hooks", "info")
_PROTECTED_LIMIT = 2000
"""Protected files recorded at most (a huge ``.idea`` is cut, logged)."""


def tree_path(path: str) -> str:
    """A workspace-relative path as the snapshot tree names it (``.git/x`` → ``DOTGIT/x``)."""
    return DOTGIT + path[4:] if path == ".git" or path.startswith(".git/") else path


def disk_path(path: str) -> str:
    """A tree path as the workspace names it (the inverse of :func:`tree_path`)."""
    return ".git" + path[len(DOTGIT) :] if path == DOTGIT or path.startswith(DOTGIT + "/") else path


def _protected_files(workspace: Path) -> list[tuple[str, str, os.stat_result]]:
    """(tree path, absolute path, lstat) of every protected file a snapshot records: the
    regular files and links among the protected names at the top (folders walked, links
    never followed), and in a real ``.git`` folder ``config``, ``hooks/**``, ``info/**``."""
    found: list[tuple[str, str, os.stat_result]] = []
    tops = [n for n in SANDBOX_READ_ONLY if not n.startswith(".git/")]
    git = workspace / ".git"
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(git).st_mode):
            tops += [f".git/{name}" for name in _GIT_KEPT]
    for name in tops:
        path = os.path.join(workspace, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            for folder, dirs, files in os.walk(path):
                dirs.sort()
                for entry in sorted(
                    [*files, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]
                ):
                    full = os.path.join(folder, entry)
                    if entry.endswith(".sample") and name == ".git/hooks":
                        continue  # git never runs these; every repository has them
                    with contextlib.suppress(OSError):
                        inner = os.lstat(full)
                        if stat.S_ISREG(inner.st_mode) or stat.S_ISLNK(inner.st_mode):
                            found.append((tree_path(os.path.relpath(full, workspace)), full, inner))
        elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
            found.append((tree_path(name), path, st))
        if len(found) > _PROTECTED_LIMIT:
            _log.warning(
                "snapshot: more than %d protected files; the rest not recorded", _PROTECTED_LIMIT
            )
            return found[:_PROTECTED_LIMIT]
    return found


def _stat_sig(st: os.stat_result) -> _Sig:
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def _covers(scope: str, path: str) -> bool:
    return scope == "." or path == scope or path.startswith(f"{scope}/")


def _tree_id(value: str) -> str:
    if not _TREE_ID.fullmatch(value):
        raise SnapshotError(f"not a snapshot id: {value!r}")
    return value


def _status(letter: bytes) -> ChangeStatus:
    if letter == b"A":
        return "add"
    if letter == b"D":
        return "delete"
    return "modify"


def _sig(path: Path) -> _Sig | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def _text(stderr: bytes) -> str:
    return stderr.decode("utf-8", errors="replace").strip()[:2000]


def _remove_stale_lock(lock: Path) -> bool:
    """Remove ``lock`` if a crash left it behind long ago; whether it was removed."""
    try:
        if time.time() - lock.stat().st_mtime < _STALE_LOCK:
            return False
        lock.unlink()
    except OSError:
        return False
    _log.warning("removed a stale %s", lock)
    return True
