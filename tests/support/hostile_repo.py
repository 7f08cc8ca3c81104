"""A repository that asks git to run programs, and a ``PATH`` holding planted helpers.

Every program planted here writes a marker file (named after what started it, holding the
environment it got) into a folder outside the workspace, then does its job with the real
program, so a test that finds no marker knows none ran, not that the run failed early.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]

HOOK_NAMES = (
    "pre-commit", "post-commit", "post-checkout", "post-merge", "pre-auto-gc",
    "post-index-change", "reference-transaction", "fsmonitor-watchman", "post-rewrite",
    "pre-push", "push-to-checkout",
)  # fmt: skip

MECHANISMS: dict[str, str] = {
    "fsmonitor": "[core]\n\tfsmonitor = {hook} fsmonitor\n",
    "fsmonitor+untrackedCache": (
        "[core]\n\tfsmonitor = {hook} fsmonitor-uc\n\tuntrackedCache = true\n"
    ),
    "hooksPath": "[core]\n\thooksPath = {hooks}\n",
    "hooks in .git/hooks": "",
    "textconv": '[diff "evil"]\n\ttextconv = {hook} textconv\n\tcachetextconv = false\n',
    "diff driver command": '[diff "evil"]\n\tcommand = {hook} diff-command\n',
    "diff.external": "[diff]\n\texternal = {hook} diff-external\n",
    "clean/smudge filter": (
        '[filter "evil"]\n\tclean = {hook} clean\n\tsmudge = {hook} smudge\n\trequired = true\n'
    ),
    "process filter": '[filter "evil"]\n\tprocess = {hook} process\n',
    "include.path": "[include]\n\tpath = {included}\n",
    "includeIf gitdir": '[includeIf "gitdir:{git_dir}"]\n\tpath = {included}\n',
    "pager": "[core]\n\tpager = {hook} pager\n[pager]\n\tdiff = {hook} pager-diff\n",
    "editors": "[core]\n\teditor = {hook} editor\n[sequence]\n\teditor = {hook} seq-editor\n",
    "sshCommand via a promisor remote": (
        "[core]\n\tsshCommand = {hook} ssh\n\trepositoryformatversion = 1\n"
        '[remote "origin"]\n\turl = ssh://example.invalid/x.git\n\tpromisor = true\n'
        "[extensions]\n\tpartialClone = origin\n"
    ),
    "credential and askpass": (
        "[credential]\n\thelper = !{hook} credential\n[core]\n\taskPass = {hook} askpass\n"
    ),
    "gpg": "[gpg]\n\tprogram = {hook} gpg\n[log]\n\tshowSignature = true\n",
}
"""Each way a repository's configuration makes git start a program (``{hook}`` is a script
in the workspace that leaves a marker)."""

INCLUDED = (
    "[core]\n\tfsmonitor = {hook} included-fsmonitor\n"
    '[filter "evil"]\n\tclean = {hook} included-clean\n\tsmudge = {hook} included-smudge\n'
    '[diff "evil"]\n\ttextconv = {hook} included-textconv\n'
)

ATTRIBUTES = "* diff=evil filter=evil\n"

PLANTED = ("git", "bwrap", "rg", "env", "bash", "sh", "cat", "less")
"""The helper programs planted on the in-workspace ``PATH`` entry."""


SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
"""Where the real programs are (never a planted folder)."""
REAL_ENV = shutil.which("env", path=SYSTEM_PATH) or "/usr/bin/env"


def hook_script(path: Path, markers: Path, *, name: str | None = None, then: str = "") -> None:
    """A script that records its environment in ``markers``, under ``name`` (default: its
    first argument, or its own file name), then runs ``then``. It names ``env`` by its
    absolute path: a planted ``env`` first on ``PATH`` would otherwise call itself."""
    named = name or '${1:-$(basename "$0")}'
    path.write_text(
        f'#!/bin/sh\nname="{named}"\n"{REAL_ENV}" > "{markers}/$name.$$" 2>/dev/null\n{then}\n'
    )
    path.chmod(0o755)


def git(folder: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=folder, check=True, capture_output=True)


def hostile_repository(ws: Path, markers: Path, mechanisms: list[str]) -> None:
    """``ws`` as a git repository with a commit, a changed file, an untracked and a large
    untracked file, whose configuration (and attributes) use ``mechanisms``."""
    markers.mkdir(parents=True, exist_ok=True)
    (ws / "a.txt").write_text("one\ntwo\n")
    (ws / "b.txt").write_text("bee\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    hook = ws / "hook.sh"
    hook_script(hook, markers)
    hooks = ws / "hooks"
    hooks.mkdir()
    for folder in (hooks, ws / ".git" / "hooks"):
        folder.mkdir(exist_ok=True)
        for name in HOOK_NAMES:
            hook_script(folder / name, markers)
    values = {
        "hook": str(hook),
        "hooks": str(hooks),
        "included": str(ws / "evil.cfg"),
        "git_dir": str(ws / ".git"),
    }
    (ws / "evil.cfg").write_text(INCLUDED.format(**values))
    with open(ws / ".git" / "config", "a", encoding="utf-8") as config:
        for name in mechanisms:
            config.write(MECHANISMS[name].format(**values))
    (ws / ".gitattributes").write_text(ATTRIBUTES)
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "attributes").write_text(ATTRIBUTES)
    (ws / "a.txt").write_text("one\ntwo, changed\n")
    (ws / "c.txt").write_text("untracked\n")
    (ws / "big.bin").write_bytes(b"x" * (3 * 1024 * 1024))


def plant_programs(bin_dir: Path, markers: Path, names: tuple[str, ...] = PLANTED) -> None:
    """Fake ``names`` in ``bin_dir``: each leaves a marker, then runs the real program."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        real = shutil.which(name, path=SYSTEM_PATH) or f"/usr/bin/{name}"
        hook_script(bin_dir / name, markers, name=f"planted-{name}", then=f'exec "{real}" "$@"')


def markers_left(markers: Path) -> dict[str, str]:
    """Marker name → the environment its program got."""
    if not markers.exists():
        return {}
    return {p.name: p.read_text(errors="replace") for p in sorted(markers.iterdir())}
