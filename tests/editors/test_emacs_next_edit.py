"""docs/editors.md's Eglot sketch for next edits, run for real: ``emacs --batch`` with the
Eglot setup and the sketch as written, the real ``lsp-agent serve`` with completion on and the
fake LLM's completion model — a parameter renamed, ``lsp-agent-next-edit`` asks
``agent/nextEdit``, ``lsp-agent-take-next-edit`` applies the call site's edit and reports it.

Skipped only without ``emacs`` on PATH, like the other Emacs tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.lsp.test_inline_completion import completion_config
from tests.support.editors import EMACS_DRIVER_HELPERS, documented_snippet, reports, run_editor
from tests.support.user_config import write_user_config

EMACS = shutil.which("emacs")
KEY = "sk-lsp-emacs-test-key"

pytestmark = pytest.mark.skipif(
    EMACS is None, reason="emacs is not installed (CI installs emacs-nox and elpa-eglot)"
)

DRIVER = r"""
(require 'cl-lib)
(require 'json)
(unless (require 'eglot nil t)
  (princ "no-eglot\n")
  (kill-emacs 3))
(load (getenv "LSP_AGENT_EGLOT") nil t)
(load (getenv "LSP_AGENT_SNIPPET") nil t)
(setq eglot-sync-connect 120 eglot-connect-timeout 120
      jsonrpc-default-request-timeout 120)

(find-file (getenv "LSP_AGENT_TEST_FILE"))
(run-hooks 'post-command-hook)
(test--wait "Eglot to connect" #'eglot-current-server 120)
;; the user adds a parameter
(goto-char (point-min))
(search-forward "width")
(insert ", height")
(lsp-agent-next-edit)
(test--report "suggestion" lsp-agent--next-edit)
(lsp-agent-take-next-edit)
(test--report "buffer" (buffer-string))
(test--report "messages" (with-current-buffer "*Messages*" (buffer-string)))
(eglot-shutdown (eglot-current-server))
(kill-emacs 0)
"""

AREA = "def area(width):\n    return width * width\n\n\nprint(area(3))\n"
ANSWER = "EDIT 5-5\nprint(area(3, 4))\nEND\nREASON: the new parameter at the call"


def test_the_documented_eglot_sketch_asks_and_takes_a_next_edit(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    source = workspace / "area.py"
    source.write_text(AREA)
    eglot = tmp_path / "lsp-agent-eglot.el"
    eglot.write_text(documented_snippet("Emacs (Eglot)", "elisp"))
    sketch = tmp_path / "lsp-agent-next-edit.el"
    sketch.write_text(
        documented_snippet("Inline completion and next edits in Emacs and Helix", "elisp")
    )
    driver = tmp_path / "driver.el"
    driver.write_text(EMACS_DRIVER_HELPERS + DRIVER)

    def configure(fake: FakeLLMServer) -> None:
        write_user_config(completion_config(fake))

    assert EMACS is not None
    done, _ = run_editor(
        [EMACS, "--batch", "-l", str(driver)],
        cwd=workspace,
        script={"completions": [{"text": ANSWER}]},
        api_key=KEY,
        env={
            "LSP_AGENT_EGLOT": str(eglot),
            "LSP_AGENT_SNIPPET": str(sketch),
            "LSP_AGENT_TEST_FILE": str(source),
        },
        before=configure,
    )

    if "no-eglot" in done.stdout:
        pytest.fail("this Emacs has no Eglot: install elpa-eglot (Emacs 28) or use Emacs 29+")
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    found = reports(done.stdout, ("suggestion", "buffer", "messages"))
    assert found["suggestion"]["reason"] == "the new parameter at the call"
    assert found["suggestion"]["range"]["start"]["line"] == 4
    assert found["buffer"] == AREA.replace("(width)", "(width, height)").replace(
        "area(3)", "area(3, 4)"
    )
    assert "next edit: the new parameter at the call" in found["messages"]
