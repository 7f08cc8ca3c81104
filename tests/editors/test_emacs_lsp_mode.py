"""docs/editors.md's Emacs lsp-mode snippet, run for real: ``emacs --batch`` loads it as
written, lsp-mode starts ``lsp-agent serve`` (a plain LSP client) against the fake LLM; at a
cursor (lsp-mode asks with an empty range and no diagnostic of ours) the line's actions are
offered, "Ask agent to fix this line" runs a turn, the permission is answered in the
minibuffer, the edit lands in the buffer and the answer's preview in the echo area (lsp-mode
does not open the transcript).

Skipped only without ``emacs`` on PATH; fails when lsp-mode is missing (CI installs
``emacs-nox`` and ``elpa-lsp-mode``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.editors import (
    EMACS_DRIVER_HELPERS,
    broken_workspace,
    documented_snippet,
    reports,
    run_editor,
    transcript_named_in,
)

EMACS = shutil.which("emacs")
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


REPORTS = ("actions", "prompts", "buffer", "messages")


def test_the_documented_lsp_mode_setup_offers_and_runs_the_line_actions(
    tmp_path: Path, isolated_home: Path
) -> None:
    source = broken_workspace(tmp_path)
    snippet = tmp_path / "lsp-agent-lsp-mode.el"
    snippet.write_text(documented_snippet("Emacs (lsp-mode)", "elisp"))
    driver = tmp_path / "driver.el"
    driver.write_text(EMACS_DRIVER_HELPERS + DRIVER)
    edit = {"file_path": str(source), "old_string": "print(valu)", "new_string": "print(value)"}
    script = {
        "turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "Fixed: valu."}]
    }

    assert EMACS is not None
    done, requests = run_editor(
        [EMACS, "--batch", "-l", str(driver)],
        cwd=source.parent,
        script=script,
        api_key=KEY,
        env={
            "LSP_AGENT_SNIPPET": str(snippet),
            "LSP_AGENT_TEST_FILE": str(source),
            "LSP_AGENT_TEST_TMP": str(tmp_path),
        },
    )

    if "no-lsp-mode" in done.stdout:
        pytest.fail("this Emacs has no lsp-mode: install elpa-lsp-mode")
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    found = reports(done.stdout, REPORTS)
    # a cursor, no diagnostic: the line's actions (lsp-mode got nothing here before)
    assert found["actions"] == [
        "Ask agent to fix this line",
        "Ask agent about this line…",
        "Explain with agent",
    ]
    assert "Fix this problem in a.py (line 1)" in str(requests[0]["messages"])
    assert "lsp-agent wants to Edit a.py" in found["prompts"][1]
    assert found["buffer"] == "print(value)\n"
    # the server writes the same text on disk before the turn goes on (docs/editors.md)
    assert source.read_text() == "print(value)\n"
    # the answer where lsp-mode shows server messages, with the transcript's path
    [shown] = [line for line in found["messages"].splitlines() if "lsp-agent: Fixed" in line]
    assert "Fixed: valu." in transcript_named_in(shown).read_text()
