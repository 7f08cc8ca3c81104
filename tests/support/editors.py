"""What the real-editor tests (tests/editors/) share: the documented snippet, the workspace
with its one mistake, the editor run against the fake LLM, and the driver's reports."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import IO, Any, NamedTuple

from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm

DOC = Path(__file__).resolve().parents[2] / "docs" / "editors.md"

# The Emacs drivers' waiting and reporting: a hang becomes an error, a result a stdout line.
EMACS_DRIVER_HELPERS = r"""
(defun test--wait (what predicate seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "timed out waiting for %s" what))
      (accept-process-output nil 0.05))))
(defun test--report (key value)
  (princ (format "%s %s\n" key (json-encode value))))
"""


def documented_snippet(heading: str, language: str) -> str:
    """The one ``language`` block of docs/editors.md's ``## heading`` section, exactly as a
    user copies it."""
    section = DOC.read_text().split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(rf"```{language}\n(.*?)```", section, re.S)
    assert len(blocks) == 1, f"the {heading} section has one {language} block"
    return str(blocks[0])


def broken_workspace(tmp_path: Path) -> Path:
    """A git workspace with ``a.py`` holding one mistake (``valu``); returns ``a.py``."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    source = workspace / "a.py"
    source.write_text("print(valu)\n")
    return source


class EditorRun(NamedTuple):
    done: subprocess.CompletedProcess[str]
    # the bodies of the model requests of the turn (side requests left out)
    requests: list[dict[str, Any]]


def run_editor(
    argv: list[str],
    *,
    cwd: Path,
    script: dict[str, Any],
    api_key: str,
    env: Mapping[str, str],
    stdin: int | IO[Any] | None = None,
    before: Callable[[FakeLLMServer], object] | None = None,
) -> EditorRun:
    """Run the editor to its end against the fake LLM playing ``script``; ``lsp-agent`` is
    the one installed next to this Python, as the snippets start it. ``before`` gets the fake
    first (e.g. to write a config naming its address)."""
    with running_fake_llm(script) as fake_llm:
        if before is not None:
            before(fake_llm)
        done = subprocess.run(
            argv,
            cwd=cwd,
            env={
                **os.environ,
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                "ANTHROPIC_BASE_URL": fake_llm.anthropic_base_url,
                "ANTHROPIC_API_KEY": api_key,
                "LSP_AGENT_MODEL": "anthropic/claude-test",
                **env,
            },
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=300,
        )
        requests = [r.body for r in fake_llm.requests if r.turn != "side"]
    return EditorRun(done, requests)


def reports(text: str, keys: Collection[str] | None = None) -> dict[str, Any]:
    """The driver's ``key json`` lines (only ``keys`` when given; a bare key is ``True``)."""
    found: dict[str, Any] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if keys is None or key in keys:
            found[key] = json.loads(value) if value else True
    return found


def transcript_named_in(message: str) -> Path:
    """The transcript a plain client's answer message points to."""
    return Path(re.findall(r"the whole conversation: (\S+\.md)\)", message)[0])
