"""docs/editors.md's Emacs lsp-mode snippet, run for real: ``emacs --batch`` loads it as
written, lsp-mode starts ``lsp-agent serve`` (a plain LSP client) against the fake LLM; at a
cursor (lsp-mode asks with an empty range and no diagnostic of ours) the line's actions are
offered, "Ask agent to fix this line" runs a turn, the permission is answered in the
minibuffer, the edit lands in the buffer and the answer's preview in the echo area (lsp-mode
does not open the transcript).

Skipped only without ``emacs`` on PATH; fails when lsp-mode is missing (CI installs
``emacs-nox`` and ``elpa-lsp-mode``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.fake_llm import running_fake_llm

EMACS = shutil.which("emacs")
DOC = Path(__file__).resolve().parents[2] / "docs" / "editors.md"
KEY = "sk-lsp-emacs-lsp-mode-test-key"

pytestmark = pytest.mark.skipif(
    EMACS is None, reason="emacs is not installed (CI installs emacs-nox and elpa-lsp-mode)"
)

# What a user does, in batch mode: open the file (python-mode's hook runs the snippet's
# lsp-deferred), then `M-x lsp-execute-code-action` at the start of the file, the answers typed.
DRIVER = r"""
(unless (require 'lsp-mode nil t)
  (princ "no-lsp-mode\n")
  (kill-emacs 3))
(require 'cl-lib)
(require 'json)
(setq lsp-session-file (expand-file-name "lsp-session" (getenv "LSP_AGENT_TEST_TMP"))
      lsp-auto-guess-root t
      lsp-enable-file-watchers nil
      lsp-headerline-breadcrumb-enable nil
      lsp-modeline-code-actions-enable nil
      lsp-modeline-diagnostics-enable nil
      lsp-lens-enable nil
      lsp-response-timeout 120
      lsp-modeline-workspace-status-enable nil
      lsp-enable-snippet nil
      lsp-diagnostics-provider :none
      lsp-completion-provider :none)
(load (getenv "LSP_AGENT_SNIPPET") nil t)
(defun test--wait (what predicate seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "timed out waiting for %s" what))
      (accept-process-output nil 0.05))))
(defun test--report (key value)
  (princ (format "%s %s\n" key (json-encode value))))
(find-file (getenv "LSP_AGENT_TEST_FILE"))
;; lsp-deferred waits for the buffer to be shown, which never happens in batch mode
(unless (lsp-workspaces) (lsp))
(test--wait "lsp-mode to connect"
            (lambda () (and (lsp-workspaces)
                            (eq (lsp--workspace-status (car (lsp-workspaces))) 'initialized)))
            120)
(goto-char (point-min))
(test--report "actions" (vconcat (mapcar (lambda (a) (lsp:code-action-title a))
                                         (lsp-code-actions-at-point))))
(defvar test--prompts nil)
(defvar test--answers '("Ask agent to fix this line" "Allow once"))
(cl-letf (((symbol-function 'completing-read)
           (lambda (prompt &rest _)
             (push (substring-no-properties prompt) test--prompts)
             (pop test--answers)))
          ((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
  (call-interactively #'lsp-execute-code-action)
  (test--wait "the agent's edit in the buffer"
              (lambda () (string-match-p "print(value)" (buffer-string)))
              120)
  (test--wait "the answer in the echo area"
              (lambda () (with-current-buffer "*Messages*"
                           (string-match-p "lsp-agent: Fixed" (buffer-string))))
              120))
(test--report "prompts" (vconcat (reverse test--prompts)))
(test--report "buffer" (buffer-string))
(test--report "messages" (with-current-buffer "*Messages*" (buffer-string)))
(lsp-workspace-shutdown (car (lsp-workspaces)))
(kill-emacs 0)
"""


def documented_snippet() -> str:
    """The lsp-mode snippet of docs/editors.md, exactly as a user copies it."""
    text = DOC.read_text()
    section = text.split("## Emacs (lsp-mode)", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```elisp\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the lsp-mode section has one elisp block"
    return blocks[0]


def reports(stdout: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for line in stdout.splitlines():
        key, _, value = line.partition(" ")
        if key in ("actions", "prompts", "buffer", "messages"):
            found[key] = json.loads(value)
    return found


def test_the_documented_lsp_mode_setup_offers_and_runs_the_line_actions(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    source = workspace / "a.py"
    source.write_text("print(valu)\n")
    snippet = tmp_path / "lsp-agent-lsp-mode.el"
    snippet.write_text(documented_snippet())
    driver = tmp_path / "driver.el"
    driver.write_text(DRIVER)
    edit = {"file_path": str(source), "old_string": "print(valu)", "new_string": "print(value)"}
    script = {
        "turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "Fixed: valu."}]
    }

    with running_fake_llm(script) as fake_llm:
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_BASE_URL": fake_llm.anthropic_base_url,
            "ANTHROPIC_API_KEY": KEY,
            "LSP_AGENT_MODEL": "anthropic/claude-test",
            "LSP_AGENT_SNIPPET": str(snippet),
            "LSP_AGENT_TEST_FILE": str(source),
            "LSP_AGENT_TEST_TMP": str(tmp_path),
        }
        assert EMACS is not None
        done = subprocess.run(
            [EMACS, "--batch", "-l", str(driver)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        requests = [r.body for r in fake_llm.requests if r.turn != "side"]

    if "no-lsp-mode" in done.stdout:
        pytest.fail("this Emacs has no lsp-mode: install elpa-lsp-mode")
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    found = reports(done.stdout)
    # a cursor, no diagnostic: the line's actions (lsp-mode got nothing here before)
    assert found["actions"] == [
        "Ask agent to fix this line",
        "Ask agent about this line…",
        "Explain with agent",
    ]
    assert "Fix this problem in a.py (line 1)" in str(requests[0]["messages"])
    assert "lsp-agent wants to Edit a.py" in found["prompts"][1]
    assert found["buffer"] == "print(value)\n"
    assert source.read_text() == "print(valu)\n"
    # the answer where lsp-mode shows server messages, with the transcript's path
    [shown] = [line for line in found["messages"].splitlines() if "lsp-agent: Fixed" in line]
    transcript = Path(re.findall(r"the whole conversation: (\S+\.md)\)", shown)[0])
    assert "Fixed: valu." in transcript.read_text()
