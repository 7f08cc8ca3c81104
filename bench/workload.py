"""The workloads: the small repository with hello.py, the large one, the scripted task.

Every agent gets the same task — read hello.py, edit ``Hello`` into ``Goodbye``, answer —
scripted through the fake LLM with that agent's own tool names and argument names.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from bench import snapshot

PROMPT = "In hello.py, change the greeting Hello to Goodbye."
HELLO = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n\n\nprint(greet("world"))\n'
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def _commit(root: Path) -> None:
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench workload"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)


def small_repo(root: Path) -> Path:
    """The 3-file git repository: hello.py, a README and a .gitignore."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "hello.py").write_text(HELLO)
    (root / "README.md").write_text("# hello\n\nPrints a greeting.\n")
    (root / ".gitignore").write_text("__pycache__/\n")
    _commit(root)
    return root


def large_repo(root: Path, files: int = 5000, size_mb: float = 20.0) -> Path:
    """``files`` generated files (``size_mb`` MiB in all, committed and packed) plus hello.py."""
    root.mkdir(parents=True, exist_ok=True)
    snapshot.generate(root, files, size_mb, packed=True)
    (root / "hello.py").write_text(HELLO)
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "add", "hello.py"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "hello"], cwd=root, env=env, check=True)
    return root


def reset_hello(root: Path) -> None:
    """Put hello.py back as generated, so the next run edits the same text."""
    (root / "hello.py").write_text(HELLO)


def task_script(
    hello: Path, *, opencode: bool = False, claude_code: bool = False
) -> list[dict[str, Any]]:
    """The fake LLM's three steps: read, edit, answer (opencode's arguments are camelCase;
    Claude Code's tools are Read and Edit)."""
    path = str(hello)
    read_tool, edit_tool = ("Read", "Edit") if claude_code else ("read", "edit")
    if opencode:
        read = {"filePath": path}
        edit = {"filePath": path, "oldString": "Hello", "newString": "Goodbye"}
    else:
        read = {"file_path": path}
        edit = {"file_path": path, "old_string": "Hello", "new_string": "Goodbye"}
    return [
        {"tool_calls": [{"name": read_tool, "input": read}]},
        {"tool_calls": [{"name": edit_tool, "input": edit}]},
        {"text": "Done: hello.py now says Goodbye."},
    ]


def isolated_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a measured process: its own HOME, config and data folders."""
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TERM")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        LSP_AGENT_DATA_DIR=str(home / "lsp-agent-data"),
        LSP_AGENT_NO_DAEMON="1",  # a cold process unless a warm row asks (run_path.warm_env)
    )
    env.update(extra)
    (home / ".config").mkdir(parents=True, exist_ok=True)
    return env
