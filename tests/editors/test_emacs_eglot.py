"""docs/editors.md's Emacs snippet, run for real: ``emacs --batch`` loads it as written,
Eglot starts ``lsp-agent serve`` (a plain LSP client) against the fake LLM, a Flymake
diagnostic gets "Ask agent to fix", and running it edits the buffer after the permission ask.

Skipped only without ``emacs`` on PATH (CI installs ``emacs-nox`` and, for Emacs 28,
``elpa-eglot``)."""

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
KEY = "sk-lsp-emacs-test-key"

pytestmark = pytest.mark.skipif(
    EMACS is None, reason="emacs is not installed (CI installs emacs-nox and elpa-eglot)"
)

# What a user does, in batch mode: open the file (python-mode's hook runs the snippet's
# eglot-ensure, which connects after the first command), then `C-c a` with the answers typed.
DRIVER = r"""
(require 'cl-lib)
(require 'json)
(unless (require 'eglot nil t)
  (princ "no-eglot\n")
  (kill-emacs 3))
(load (getenv "LSP_AGENT_SNIPPET") nil t)
(setq eglot-sync-connect 120 eglot-connect-timeout 120
      jsonrpc-default-request-timeout 120)  ; a loaded CI machine is slow, not broken

;; a linter's diagnostic, standing in for the mode's own Flymake backend
(defun test-linter (report-fn &rest _)
  (funcall report-fn
           (list (flymake-make-diagnostic (current-buffer) 7 11 :error
                                          "undefined name valu"))))
(add-hook 'python-mode-hook
          (lambda () (setq-local flymake-diagnostic-functions '(test-linter)))
          -90)

(find-file (getenv "LSP_AGENT_TEST_FILE"))
(run-hooks 'post-command-hook)
(test--wait "Eglot to connect" #'eglot-current-server 120)
(test--report "server" (eglot--server-info (eglot-current-server)))
(flymake-start)
(test--wait "the diagnostic" #'flymake-diagnostics 60)
(goto-char (point-min))
(test--report "actions"
              (vconcat (mapcar (lambda (a) (plist-get a :title))
                               (lsp-agent-code-actions (line-beginning-position)
                                                       (line-end-position)))))

(defvar test--prompts nil)
(defvar test--answers '("Ask agent to fix: undefined name valu" "Allow once"))
(cl-letf (((symbol-function 'completing-read)
           (lambda (prompt &rest _)
             (push (substring-no-properties prompt) test--prompts)
             (pop test--answers)))
          ((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
  (call-interactively (key-binding (kbd "C-c a")))
  (test--wait "the agent's edit in the buffer"
              (lambda () (string-match-p "print(value)" (buffer-string)))
              120)
  (test--wait "the answer in the echo area"
              (lambda () (with-current-buffer "*Messages*"
                           (string-match-p "lsp-agent: Fixed" (buffer-string))))
              120))
(test--report "prompts" (vconcat (reverse test--prompts)))
;; the server writes the same text on disk (Eglot cannot be asked to save)
(test--wait "the agent's edit on disk"
            (lambda () (with-temp-buffer
                         (insert-file-contents (getenv "LSP_AGENT_TEST_FILE"))
                         (string-match-p "print(value)" (buffer-string))))
            60)
(test--report "buffer" (buffer-string))
(test--report "modified" (if (buffer-modified-p) t :json-false))
(test--report "messages" (with-current-buffer "*Messages*" (buffer-string)))
(eglot-shutdown (eglot-current-server))
(kill-emacs 0)
"""

REPORTS = ("server", "actions", "prompts", "buffer", "modified", "messages")


def test_the_documented_eglot_setup_offers_and_runs_ask_agent_to_fix(
    tmp_path: Path, isolated_home: Path
) -> None:
    source = broken_workspace(tmp_path)
    snippet = tmp_path / "lsp-agent-eglot.el"
    snippet.write_text(documented_snippet("Emacs (Eglot)", "elisp"))
    driver = tmp_path / "driver.el"
    driver.write_text(EMACS_DRIVER_HELPERS + DRIVER)
    edit = {"file_path": str(source), "old_string": "print(valu)", "new_string": "print(value)"}
    script = {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "Fixed."}]}

    assert EMACS is not None
    done, requests = run_editor(
        [EMACS, "--batch", "-l", str(driver)],
        cwd=source.parent,
        script=script,
        api_key=KEY,
        env={"LSP_AGENT_SNIPPET": str(snippet), "LSP_AGENT_TEST_FILE": str(source)},
    )

    if "no-eglot" in done.stdout:
        pytest.fail("this Emacs has no Eglot: install elpa-eglot (Emacs 28) or use Emacs 29+")
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    found = reports(done.stdout, REPORTS)
    # initialize succeeded: Eglot knows the server by the name it gave
    assert found["server"]["name"] == "lsp-agent"
    # the linter's diagnostic got its quick fix (Eglot alone would not send it)
    assert "Ask agent to fix: undefined name valu" in found["actions"]
    # running it: a turn about the diagnostic, the permission asked as a showMessageRequest,
    # the edit applied in the buffer, then the same text written on disk by the server (Eglot
    # cannot be asked to save), so a command the agent runs next would see it
    assert "undefined name valu" in str(requests[0]["messages"])
    assert found["prompts"][0] == "lsp-agent: "
    assert "lsp-agent wants to Edit a.py" in found["prompts"][1]
    assert found["buffer"] == "print(value)\n"
    assert found["modified"] is True
    assert source.read_text() == "print(value)\n"
    # Eglot 1.9 opens no document the server shows: the answer comes as a message, with
    # the transcript's path (issue 32 §4)
    [shown] = [line for line in found["messages"].splitlines() if "lsp-agent: Fixed" in line]
    assert "Fixed." in transcript_named_in(shown).read_text()
