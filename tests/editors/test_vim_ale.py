"""docs/editors.md's Vim + ALE snippet, run for real: Vim (``vim -es``, no terminal) loads it
as written, ALE starts ``lsp-agent serve`` (a plain LSP client) against the fake LLM,
``:ALECodeAction`` on a word lists lsp-agent's actions (ALE sends the word under the cursor as
the range), "Explain with agent" runs a turn, and the answer comes as ALE's message, with the
transcript's path (ALE opens no document a server shows).

Skipped only without ``vim`` on PATH; fails when ALE is missing (CI installs ``vim-ale``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.editors import (
    broken_workspace,
    documented_snippet,
    reports,
    run_editor,
    transcript_named_in,
)

VIM = shutil.which("vim")
KEY = "sk-lsp-vim-ale-test-key"

pytestmark = pytest.mark.skipif(VIM is None, reason="vim is not installed (CI installs vim-ale)")

# What a user does: open the file, the cursor on a word, `:ALECodeAction`, the number of the
# action typed (ALE's `input()` prompt, answered here); ALE's messages are recorded.
DRIVER = r"""
if empty(globpath(&packpath, 'pack/*/opt/ale'))
  call writefile(['no-ale'], $LSP_AGENT_TEST_OUT, 'a')
  cquit 3
endif
set nocompatible
filetype plugin on
syntax off
let g:test_messages = []
let g:test_prompts = []
execute 'source ' . $LSP_AGENT_SNIPPET
runtime! plugin/ale.vim
call ale#util#ShowMessage('')  " loads ALE's version first, so ours replaces it
let g:test_messages = []
function! ale#util#ShowMessage(string, ...) abort
  call add(g:test_messages, a:string)
endfunction
function! ale#util#Input(message, value, ...) abort
  call add(g:test_prompts, a:message)
  let l:lines = split(a:message, "\n")
  for l:line in l:lines
    if l:line =~# ') ' . $LSP_AGENT_TEST_CHOICE . '$'
      return matchstr(l:line, '^\d\+')
    endif
  endfor
  return ''
endfunction
function! s:report(key, value) abort
  call writefile([a:key . ' ' . json_encode(a:value)], $LSP_AGENT_TEST_OUT, 'a')
endfunction
function! s:wait(what, predicate, seconds) abort
  let l:deadline = reltimefloat(reltime()) + a:seconds
  while !eval(a:predicate)
    if reltimefloat(reltime()) > l:deadline
      call s:report('timeout', a:what)
      call s:report('messages', g:test_messages)
      call s:report('prompts', g:test_prompts)
      cquit 2
    endif
    sleep 50m
  endwhile
endfunction
execute 'edit ' . $LSP_AGENT_TEST_FILE
call cursor(1, 8)
ALECodeAction
call s:wait('the code actions', 'len(g:test_prompts) > 0', 120)
let s:answered = 'len(filter(copy(g:test_messages), {_, m -> m =~# "lsp-agent: "})) > 0'
call s:wait('the answer', s:answered, 120)
call s:report('prompts', g:test_prompts)
call s:report('messages', g:test_messages)
qall!
"""


def test_the_documented_ale_setup_offers_and_runs_explain(
    tmp_path: Path, isolated_home: Path
) -> None:
    source = broken_workspace(tmp_path)
    snippet = tmp_path / "lsp-agent-ale.vim"
    snippet.write_text(documented_snippet("Vim (ALE)", "vim"))
    driver = tmp_path / "driver.vim"
    driver.write_text(DRIVER)
    out = tmp_path / "out.txt"
    script = {"turns": [{"text": "It prints valu, which is not defined."}]}

    assert VIM is not None
    done, requests = run_editor(
        [VIM, "-N", "-u", "NONE", "-i", "NONE", "-es", "-S", str(driver)],
        cwd=source.parent,
        script=script,
        api_key=KEY,
        env={
            "LSP_AGENT_SNIPPET": str(snippet),
            "LSP_AGENT_TEST_FILE": str(source),
            "LSP_AGENT_TEST_CHOICE": "Explain with agent",
            "LSP_AGENT_TEST_OUT": str(out),
        },
        stdin=subprocess.DEVNULL,
    )

    found = reports(out.read_text() if out.exists() else "")
    if "no-ale" in found:
        pytest.fail("this Vim has no ALE: install vim-ale")
    assert done.returncode == 0, f"{found}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    # ALE sends the word under the cursor as the range: the selection's actions
    [menu] = found["prompts"]
    assert "1) Ask agent about selection…" in menu
    assert "2) Explain with agent" in menu
    sent = str(requests[0]["messages"])
    assert "Explain the selected code in a.py (line 1)" in sent
    assert "valu" in sent
    # the answer where ALE shows a server's messages, with the transcript's path
    [shown] = [m for m in found["messages"] if "lsp-agent: It prints valu" in m]
    assert "It prints valu, which is not defined." in transcript_named_in(shown).read_text()
