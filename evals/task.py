"""What a task is: a generated repository, a prompt, a hidden checker and an oracle.

The checker never lives in the repository the agent works in, so the agent cannot read it.
It judges an ``Outcome``: the folder after the run, the agent's final answer and its tool
calls. ``untouched`` is the outcome of an agent that did nothing, which every checker must
fail (tests/unit/evals). The oracle is the scripted trajectory ``--scripted`` feeds the fake
model: proof that the task is solvable through the agent's own tools.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

Turn = dict[str, Any]
"""One fake-model answer (docs/fake-llm.md, "Script format")."""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "evals",
    "GIT_AUTHOR_EMAIL": "evals@example.invalid",
    "GIT_COMMITTER_NAME": "evals",
    "GIT_COMMITTER_EMAIL": "evals@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


@attrs.frozen(kw_only=True)
class ToolCall:
    name: str
    input: Mapping[str, Any]
    status: str
    """``completed`` or ``failed`` (a refusal included)."""


@attrs.frozen(kw_only=True)
class Outcome:
    """What the checker sees after a run."""

    workspace: Path
    answer: str = ""
    """The text of the agent's last message."""
    tool_calls: tuple[ToolCall, ...] = ()

    def called(self, name: str) -> list[ToolCall]:
        return [call for call in self.tool_calls if call.name == name]


@attrs.frozen(kw_only=True)
class Verdict:
    solved: bool
    reason: str


Checker = Callable[["Task", Outcome], Verdict]
Oracle = Callable[[Path], Sequence[Turn]]


@attrs.frozen(kw_only=True)
class Task:
    """One task. ``files`` is the repository, committed; ``dirty`` is written after the commit
    (uncommitted work the agent must respect); ``config`` is the user config file's extra
    content (permission rules the task runs under)."""

    name: str
    category: str
    prompt: str
    files: Mapping[str, str]
    check: Checker
    oracle: Oracle
    dirty: Mapping[str, str] = attrs.field(factory=dict)
    config: Mapping[str, Any] = attrs.field(factory=dict)
    mode: Literal["build", "plan"] = "build"
    serve: bool = False
    """Also run through ``lsp-agent serve`` with the scripted editor (the serve task set)."""
    open_files: tuple[str, ...] = ()
    """Open in the scripted editor as buffers (saved to disk when the turn ends)."""
    diagnostics: tuple[tuple[str, int, str], ...] = ()
    """``(path, line, message)`` the scripted editor reports before the prompt (serve)."""

    def make(self, root: Path) -> Path:
        """The task's repository at ``root``: ``files`` committed, then ``dirty`` written."""
        root.mkdir(parents=True, exist_ok=True)
        for rel, text in self.files.items():
            write(root / rel, text)
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        for rel, text in self.dirty.items():
            write(root / rel, text)
        return root

    def untouched(self, root: Path) -> Outcome:
        """The outcome of an agent that did nothing: the fresh repository, no answer."""
        return Outcome(workspace=self.make(root))


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


# -- checker helpers ---------------------------------------------------------------------------


def run_python(root: Path, code: str, timeout: float = 60) -> Verdict:
    """``code`` run by this interpreter in ``root`` (its modules importable): solved when it
    exits 0. The hidden tests of a task are such code. It imports what the agent wrote, so it
    sees none of the caller's environment (no keys): only PATH, the locale and ``root``."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env.update(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1", HOME=str(root))
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return Verdict(solved=False, reason=f"the hidden check ran over {timeout:.0f} s")
    if done.returncode == 0:
        return Verdict(solved=True, reason="the hidden checks pass")
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
    return Verdict(solved=False, reason=f"hidden check failed: {tail[0][:200]}")


def changed_files(task: Task, root: Path) -> list[str]:
    """The task's files whose text differs from what was generated (``dirty`` included)."""
    expected = {**task.files, **task.dirty}
    changed = []
    for rel, text in expected.items():
        path = root / rel
        if not path.is_file() or path.read_text() != text:
            changed.append(rel)
    return changed


def new_files(task: Task, root: Path) -> list[str]:
    """Files now in ``root`` that the task did not generate (``.git`` and caches aside)."""
    known = set(task.files) | set(task.dirty)
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if ".git" in path.parts or "__pycache__" in path.parts or not path.is_file():
            continue
        if rel not in known:
            found.append(rel)
    return sorted(found)


def all_of(*verdicts: Callable[[], Verdict]) -> Verdict:
    """The first failing verdict, else the last one (each computed only when needed)."""
    last = Verdict(solved=True, reason="")
    for make in verdicts:
        last = make()
        if not last.solved:
            return last
    return last


def answer_mentions(outcome: Outcome, *needles: str) -> Verdict:
    text = outcome.answer.lower()
    missing = [n for n in needles if n.lower() not in text]
    if missing:
        return Verdict(solved=False, reason=f"the answer does not mention {', '.join(missing)}")
    return Verdict(solved=True, reason="the answer names what was asked")


def tests_kept(task: Task, outcome: Outcome, *tests: str) -> Verdict:
    """Solved while none of ``tests`` (the task's test files) was changed."""
    touched = [rel for rel in changed_files(task, outcome.workspace) if rel in tests]
    if touched:
        return Verdict(solved=False, reason=f"the tests were changed: {', '.join(touched)}")
    return Verdict(solved=True, reason="the tests are as they were")


def tests_kept_and_passes(tests: str, code: str) -> Checker:
    """The check of a task to make its tests pass: ``tests`` (its test file) as it was, and
    ``code`` (the hidden checks, see :func:`run_python`) passes."""

    def check(task: Task, outcome: Outcome) -> Verdict:
        return all_of(
            lambda: tests_kept(task, outcome, tests),
            lambda: run_python(outcome.workspace, code),
        )

    return check


def nothing_changed(task: Task, outcome: Outcome) -> Verdict:
    changed = changed_files(task, outcome.workspace) + new_files(task, outcome.workspace)
    if changed:
        return Verdict(solved=False, reason=f"files changed: {', '.join(changed[:5])}")
    return Verdict(solved=True, reason="no file changed")


# -- oracle helpers ----------------------------------------------------------------------------

UNITTEST = "python3 -m unittest -q"
"""How an oracle runs a task's unit tests."""


def tool(name: str, **arguments: Any) -> Turn:
    """A model step that calls one tool."""
    return {"tool_calls": [{"name": name, "input": arguments}]}


def tools(*calls: tuple[str, Mapping[str, Any]]) -> Turn:
    """A model step that calls several tools at once."""
    return {"tool_calls": [{"name": name, "input": dict(args)} for name, args in calls]}


def say(text: str) -> Turn:
    """The model's final answer."""
    return {"text": text}
