"""Issue 36 in Neovim, the plugin's own rules: ghost text over the standard
``textDocument/inlineCompletion`` and next-edit suggestions (``agent/nextEdit``), against a
scripted server (``completion_server.py``) behind the recording tap, so what the plugin sent —
requests, ``$/cancelRequest``, ``agent/nextEdit/feedback`` — is read off the wire. The real
server with the fake LLM is ``test_completion.py``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.conftest import Editor

HERE = Path(__file__).parent
TAP = HERE.parent / "support" / "lsp_tap.py"
SERVER = HERE / "completion_server.py"

GHOST = """
local ns = require('lsp_agent.completion').ns
local marks = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })
local out = {}
for _, m in ipairs(marks) do
  local text = {}
  for _, chunk in ipairs(m[4].virt_text or {}) do table.insert(text, chunk[1]) end
  for _, line in ipairs(m[4].virt_lines or {}) do
    table.insert(text, '\\n')
    for _, chunk in ipairs(line) do table.insert(text, chunk[1]) end
  end
  table.insert(out, table.concat(text))
end
return out
"""

NEXT_EDIT = """
local ns = require('lsp_agent.next_edit').ns
local out = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
  local d = m[4]
  table.insert(out, { row = m[2], col = m[3], text = d.virt_text and d.virt_text[1][1] or '',
    sign = d.sign_text or '', hl = d.hl_group or '' })
end
return out
"""


def start(editor: Editor, tmp_path: Path, script: dict[str, Any], **options: Any) -> Path:
    """The plugin with the scripted server behind the tap; the wire log's path."""
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps(script))
    log = tmp_path / "wire.jsonl"
    server = [sys.executable, str(SERVER), str(script_path)]
    editor.setup(cmd=[sys.executable, str(TAP), str(log), "--", *server], **options)
    return log


def wire(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def sent(log: Path, method: str) -> list[dict[str, Any]]:
    return [
        r["message"]
        for r in wire(log)
        if r["direction"] == "client" and r["message"].get("method") == method
    ]


def answered(log: Path, request_id: int) -> bool:
    return any(
        r["direction"] == "server"
        and r["message"].get("id") == request_id
        and "method" not in r["message"]
        for r in wire(log)
    )


def ghost(editor: Editor) -> list[str]:
    return list(editor.lua(GHOST))


def mode(editor: Editor) -> str:
    return str(editor.nvim.request("nvim_get_mode")["mode"])


def test_typing_shows_ghost_text_and_tab_accepts_it(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    log = start(
        editor,
        tmp_path,
        {"inline": [{"after": "return", "insertText": " a + b\n# done", "id": "c-1"}]},
    )
    path = workspace / "add.py"
    path.write_text("def add(a, b):\n")
    editor.edit(path)
    editor.set_cursor(1, 0)
    editor.type("o    return")
    editor.wait(lambda: ghost(editor) == [" a + b\n# done"], "the ghost text")
    requests = sent(log, "textDocument/inlineCompletion")
    # the keys came in one burst: one request after the pause, for the cursor after them
    assert len(requests) == 1
    assert requests[0]["params"]["position"] == {"line": 1, "character": 10}
    assert requests[0]["params"]["context"]["triggerKind"] == 2
    assert editor.buffer_text(path) == "def add(a, b):\n    return"  # only shown, not inserted
    hl = editor.lua(
        "return vim.api.nvim_buf_get_extmarks(0, require('lsp_agent.completion').ns, 0, -1,"
        " {details = true})[1][4].virt_text[1][2]"
    )
    assert hl == "LspAgentGhostText"

    editor.type("<Tab>")
    editor.wait(
        lambda: editor.buffer_text(path) == "def add(a, b):\n    return a + b\n# done",
        "the completion in the buffer",
    )
    assert ghost(editor) == []
    assert mode(editor) == "i"
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)") == [3, 6]
    editor.wait(lambda: sent(log, "agent/nextEdit/feedback"), "the accept reported")
    [feedback] = sent(log, "agent/nextEdit/feedback")
    assert feedback["params"] == {"id": "c-1", "accepted": True}
    assert "id" not in feedback  # a notification


def test_a_range_item_continues_what_is_typed_and_esc_hides_it(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    start(editor, tmp_path, {"inline": [{"after": "pri", "insertText": "nt('hi')", "range": True}]})
    path = workspace / "hi.py"
    path.write_text("\n")
    editor.edit(path)
    editor.type("ipri")
    # the item's text repeats the typed "pri" (its range starts at the line's start): only
    # the rest is ghost text
    editor.wait(lambda: ghost(editor) == ["nt('hi')"], "the ghost text")
    editor.type("<Esc>")
    editor.wait(lambda: ghost(editor) == [], "the ghost text gone on leaving insert mode")
    assert editor.buffer_text(path) == "pri"
    editor.type("A")  # entering insert mode asks again
    editor.wait(lambda: ghost(editor) == ["nt('hi')"], "the ghost text again")
    editor.type("<Tab>")
    editor.wait(lambda: editor.buffer_text(path) == "print('hi')", "the accepted text")


def test_tab_without_ghost_text_is_the_users_tab(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    log = start(editor, tmp_path, {"inline": []})
    editor.command("inoremap <Tab> <Tab>X")  # the user's own Tab, before the plugin's
    path = workspace / "t.py"
    path.write_text("\n")
    editor.edit(path)
    editor.type("ia")
    editor.wait(lambda: sent(log, "textDocument/inlineCompletion"), "the request")
    editor.type("<Tab>b")
    editor.wait(lambda: editor.buffer_text(path) == "a\tXb", "the user's Tab mapping ran")


def test_a_stale_answer_is_never_shown(editor: Editor, workspace: Path, tmp_path: Path) -> None:
    log = start(
        editor,
        tmp_path,
        {
            "inline": [
                {"after": "x = ", "insertText": "41", "delay": 1.5},
                {"after": "y = ", "insertText": "42", "delay": 1.5},
                {"after": "y = 4", "insertText": "3"},
            ]
        },
    )
    path = workspace / "s.py"
    path.write_text("\n")
    editor.edit(path)
    # 1. the cursor moves (no change, so nothing is cancelled) while the answer is on its way
    editor.type("ix = ")
    editor.wait(lambda: sent(log, "textDocument/inlineCompletion"), "the request")
    [first] = sent(log, "textDocument/inlineCompletion")
    editor.type("<Left>")
    editor.wait(lambda: answered(log, first["id"]), "the slow answer", timeout=30)
    # the answer is handled: shown (wrong) or dropped
    editor.wait(
        lambda: ghost(editor) or editor.lua("return require('lsp_agent.log').contains('stale')"),
        "the slow answer handled",
    )
    assert ghost(editor) == []
    # 2. a keystroke while the answer is on its way: the request is cancelled, and only the
    #    answer for the new text is shown
    editor.type("<End><CR>y = ")
    editor.wait(lambda: len(sent(log, "textDocument/inlineCompletion")) >= 2, "the second request")
    second = sent(log, "textDocument/inlineCompletion")[1]
    editor.type("4")
    editor.wait(lambda: ghost(editor) == ["3"], "the fresh answer's ghost text")
    cancels = [m["params"]["id"] for m in sent(log, "$/cancelRequest")]
    assert second["id"] in cancels
    editor.wait(lambda: answered(log, second["id"]), "the cancelled request's answer", timeout=30)
    assert ghost(editor) == ["3"]
    shown = [
        entry for entry in editor.lua("return require('lsp_agent.log').lines()") if "shown" in entry
    ]
    # the texts as logged (`shown: "3"`), not the entry's clock, which may read 23:42
    assert not any('shown: "41"' in entry or 'shown: "42"' in entry for entry in shown), shown
    assert any('shown: "3"' in entry for entry in shown), shown


FILE = "def area(width):\n    return width * width\n\n\nprint(area(3))\n"


def next_edit_script(**extra: Any) -> dict[str, Any]:
    return {
        "inline": [],
        "next_edit": [
            {
                "when": "def area(width, height)",
                "id": "n-1",
                "range": {
                    "start": {"line": 4, "character": 6},
                    "end": {"line": 4, "character": 13},
                },
                "newText": "area(3, 4)",
                "reason": "the new parameter at the call site",
                **extra,
            }
        ],
    }


def rename_parameter(editor: Editor, path: Path) -> None:
    path.write_text(FILE)
    editor.edit(path)
    editor.set_cursor(1, 14)
    editor.type("i, height<Esc>")


def test_a_next_edit_is_shown_then_tab_jumps_and_tab_accepts(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    log = start(editor, tmp_path, next_edit_script())
    path = workspace / "area.py"
    rename_parameter(editor, path)
    editor.wait(lambda: editor.lua(NEXT_EDIT), "the next-edit suggestion", timeout=30)
    [request] = sent(log, "agent/nextEdit")
    params = request["params"]
    assert params["textDocument"]["uri"] == path.as_uri()
    assert params["textDocument"]["version"] == editor.lua(
        "return vim.lsp.util.buf_versions[vim.api.nvim_get_current_buf()]"
    )
    assert params["position"] == {"line": 0, "character": 21}
    marks = editor.lua(NEXT_EDIT)
    assert {"row": 4, "col": 6, "text": "", "sign": "", "hl": "LspAgentNextEditDelete"} in marks
    assert any(m["row"] == 4 and m["col"] == 13 and m["text"] == "area(3, 4)" for m in marks)
    assert any(m["sign"].strip() == "➜" and "the new parameter" in m["text"] for m in marks)
    assert editor.buffer_text(path).endswith("print(area(3))")  # shown, not applied

    editor.type("<Tab>")
    editor.wait(lambda: editor.lua("return vim.api.nvim_win_get_cursor(0)") == [5, 6], "the jump")
    assert editor.buffer_text(path).endswith("print(area(3))")
    editor.type("<Tab>")
    editor.wait(lambda: editor.buffer_text(path).endswith("print(area(3, 4))"), "the accept")
    assert editor.lua(NEXT_EDIT) == []
    editor.wait(lambda: sent(log, "agent/nextEdit/feedback"), "the feedback")
    assert [m["params"] for m in sent(log, "agent/nextEdit/feedback")] == [
        {"id": "n-1", "accepted": True}
    ]
    # one undo step: `u` takes back the suggestion only, the parameter stays
    editor.type("u")
    editor.wait(lambda: editor.buffer_text(path).endswith("print(area(3))"), "the undo")
    assert editor.buffer_text(path).startswith("def area(width, height):")
    # the mappings are gone with the suggestion: <Tab> is Neovim's own again
    assert editor.lua("return vim.fn.maparg('<Tab>', 'n')") == ""


@pytest.mark.parametrize("keys", ["<Esc>", "ggO# area<Esc>"], ids=["esc", "typing elsewhere"])
def test_a_next_edit_is_rejected_by_esc_or_by_typing_elsewhere(
    editor: Editor, workspace: Path, tmp_path: Path, keys: str
) -> None:
    log = start(editor, tmp_path, next_edit_script())
    path = workspace / "area.py"
    rename_parameter(editor, path)
    editor.wait(lambda: editor.lua(NEXT_EDIT), "the next-edit suggestion", timeout=30)
    editor.type(keys)
    editor.wait(lambda: sent(log, "agent/nextEdit/feedback"), "the feedback")
    assert [m["params"] for m in sent(log, "agent/nextEdit/feedback")][:1] == [
        {"id": "n-1", "accepted": False}
    ]
    assert editor.lua(NEXT_EDIT) == []
    assert editor.buffer_text(path).endswith("print(area(3))")


def test_a_next_edit_for_a_version_the_buffer_left_is_not_shown(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    log = start(editor, tmp_path, next_edit_script(delay=1.5), next_edit={"debounce": 100})
    path = workspace / "area.py"
    rename_parameter(editor, path)
    editor.wait(lambda: sent(log, "agent/nextEdit"), "the request")
    [first] = sent(log, "agent/nextEdit")
    # an edit while the answer is on its way, by something that fires no autocommand (so the
    # request is not cancelled): the answer arrives for a version the buffer has left
    editor.lua("vim.o.eventignore = 'all'; vim.api.nvim_buf_set_lines(0, -1, -1, false, {'x = 1'})")
    editor.wait(lambda: answered(log, first["id"]), "the slow answer", timeout=30)
    editor.wait(
        lambda: (
            editor.lua(NEXT_EDIT)
            or editor.lua("return require('lsp_agent.log').contains('stale next edit n-1')")
        ),
        "the slow answer handled",
    )
    editor.lua("vim.o.eventignore = ''")
    assert editor.lua(NEXT_EDIT) == []
    assert sent(log, "agent/nextEdit/feedback") == []  # never shown, never reported


BUILTIN = r"""
-- Neovim 0.12's API, as far as the plugin uses it, recorded (0.11 has none)
_G.builtin = { enabled = {}, gets = 0, accept = false }
vim.lsp.inline_completion = {
  enable = function(enable, filter) table.insert(_G.builtin.enabled, { enable, filter }) end,
  get = function(opts)
    _G.builtin.gets = _G.builtin.gets + 1
    if _G.builtin.accept then
      vim.api.nvim_put({ 'BUILTIN' }, 'c', false, true)
    end
    return _G.builtin.accept
  end,
}
"""


def test_where_neovim_has_inline_completion_its_own_client_does_it(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    editor.lua(BUILTIN)
    log = start(editor, tmp_path, {"inline": [{"after": "x", "insertText": "yz"}]})
    path = workspace / "b.py"
    path.write_text("\n")
    editor.edit(path)
    bufnr = editor.lua("return vim.api.nvim_get_current_buf()")
    client_id = editor.lua("return vim.lsp.get_clients({name = 'lsp_agent'})[1].id")
    editor.wait_lua("#_G.builtin.enabled > 0", "vim.lsp.inline_completion.enable()")
    assert editor.lua("return _G.builtin.enabled") == [
        [True, {"bufnr": bufnr, "client_id": client_id}]
    ]
    editor.type("ix<Tab>")  # nothing to accept: the key's own meaning
    editor.wait(lambda: editor.buffer_text(path) == "x\t", "the plain Tab")
    editor.lua("_G.builtin.accept = true")
    editor.type("<Tab>")  # Neovim's own accept
    editor.wait(lambda: editor.buffer_text(path) == "x\tBUILTIN", "the built-in accept")
    assert editor.lua("return _G.builtin.gets") == 2
    # the plugin asked nothing itself (Neovim's client would, through its own handler)
    assert sent(log, "textDocument/inlineCompletion") == []
    assert ghost(editor) == []


def test_no_ghost_text_while_the_completion_menu_is_open(
    editor: Editor, workspace: Path, tmp_path: Path
) -> None:
    log = start(editor, tmp_path, {"inline": [{"after": "alp", "insertText": "GHOST"}]})
    path = workspace / "menu.py"
    path.write_text("alpha alpine\n")
    editor.edit(path)
    editor.command("set completeopt=menuone,noinsert,noselect")
    editor.type("Goalp<C-n>")  # Vim's keyword completion menu: alpha, alpine
    editor.wait(lambda: sent(log, "textDocument/inlineCompletion"), "the request")
    editor.wait(
        lambda: (
            ghost(editor)
            or editor.lua("return require('lsp_agent.log').contains('completion menu is open')")
        ),
        "the answer handled",
    )
    assert editor.lua("return vim.fn.pumvisible()") == 1
    assert ghost(editor) == []
