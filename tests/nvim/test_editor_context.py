"""Issue 22 in Neovim: the agent asks the user's other language servers (``agent/editor/query``),
the focus (file, cursor, selection) goes with each prompt as a removable chip, ``@`` / ``#``
mentions in the prompt area, and the context gauge."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.nvim.conftest import VIEW
from tests.nvim.test_protocol import SCHEMA, violations

WORDS_SERVER = Path(__file__).with_name("words_server.py")

START_WORDS_SERVER = """
local cmd, root = ...
vim.lsp.config('words_test', {
  cmd = cmd,
  filetypes = { 'python' },
  root_dir = function(_, on_dir) on_dir(root) end,
})
vim.lsp.enable('words_test')
"""

ANSWER = """
local params = ...
_G.test.answer = nil
coroutine.wrap(function()
  _G.test.answer = require('lsp_agent.editor_query').answer(params)
end)()
"""

A_PY = "def greet(name):\n    return 'hi ' + name\n\nprint(greet('a'))\n"
B_PY = "from a import greet\n\ngreet('b')\n"


def start_words_server(editor: Any) -> None:
    """The tests' own language server for Python buffers, besides lsp-agent."""
    editor.lua(START_WORDS_SERVER, [sys.executable, str(WORDS_SERVER)], str(editor.workspace))


def wait_words_attached(editor: Any, path: Path) -> None:
    bufnr = json.dumps(str(path))
    editor.wait_lua(
        f"#vim.lsp.get_clients({{ name = 'words_test', bufnr = vim.fn.bufnr({bufnr}) }}) > 0",
        f"the words server attached to {path.name}",
    )


def answer(editor: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The plugin's answer to an `agent/editor/query` (run in a coroutine, as the RPC runs it)."""
    editor.lua(ANSWER, params)
    return editor.wait_lua("_G.test.answer", "the editor query's answer", timeout=30)


def write_files(workspace: Path) -> tuple[Path, Path]:
    a, b = workspace / "a.py", workspace / "b.py"
    a.write_text(A_PY)
    b.write_text(B_PY)
    return a, b


# -- agent/editor/query ----------------------------------------------------------------------


def test_editor_query_asks_the_other_servers_of_a_file_loaded_hidden(
    editor: Any, workspace: Path
) -> None:
    a, b = write_files(workspace)
    start_words_server(editor)
    editor.edit(a)
    wait_words_attached(editor, a)
    assert editor.lua("return vim.fn.bufnr(...)", str(b)) == -1

    # b.py has no buffer: it is loaded hidden, its server attaches, and answers
    result = answer(
        editor,
        {
            "sessionId": "s",
            "kind": "references",
            "uri": b.as_uri(),
            "position": {"line": 2, "character": 1},
        },
    )
    where = sorted((item["uri"], item["range"]["start"]["line"]) for item in result["items"])
    assert where == [
        (a.as_uri(), 0),
        (a.as_uri(), 3),
        (b.as_uri(), 0),
        (b.as_uri(), 2),
    ]
    assert set(result["items"][0]) == {"uri", "range"}  # LSP's own Location, as it came
    assert violations(SCHEMA["methods"]["agent/editor/query"]["result"], result) == []
    hidden = editor.lua(
        "local b = vim.fn.bufnr(...); return { loaded = vim.api.nvim_buf_is_loaded(b),"
        " listed = vim.bo[b].buflisted, shown = #vim.fn.win_findbuf(b) }",
        str(b),
    )
    assert hidden == {"loaded": True, "listed": False, "shown": 0}

    symbols = answer(editor, {"sessionId": "s", "kind": "workspaceSymbols", "query": "gree"})
    assert [s["name"] for s in symbols["items"]] == ["greet"]
    # lsp-agent itself is never asked, and a kind nobody answers is an empty list
    position = {"line": 0, "character": 5}
    none = answer(
        editor, {"sessionId": "s", "kind": "hover", "uri": a.as_uri(), "position": position}
    )
    assert none == {"items": []}
    assert editor.lua(
        "return vim.tbl_map(function(c) return c.name end,"
        " require('lsp_agent.editor_query').other_clients(nil, 'textDocument/references'))"
    ) == ["words_test"]


def test_editor_queries_are_advertised_and_can_be_turned_off(editor: Any, workspace: Path) -> None:
    init = "return require('lsp_agent.config').agent_init_options().editorQueries"
    assert editor.lua(init) == [
        "definition",
        "references",
        "hover",
        "documentSymbols",
        "workspaceSymbols",
        "implementation",
        "typeDefinition",
    ]
    editor.setup(editor_queries=False)
    assert editor.lua(init) == []


def test_the_models_references_call_gets_the_other_servers_locations(
    editor: Any, workspace: Path
) -> None:
    a, _ = write_files(workspace)
    start_words_server(editor)
    call = {"name": "references", "input": {"file_path": str(a), "line": 1, "character": 5}}
    editor.fake_llm.set_script({"turns": [{"tool_calls": [call]}, {"text": "Two files use it."}]})
    editor.edit(a)
    wait_words_attached(editor, a)

    editor.command("LspAgent chat who calls greet?")
    editor.wait_chat("Two files use it.", timeout=40)
    editor.wait_idle()
    requests = editor.model_requests()
    assert "references" in [t["name"] for t in requests[0]["tools"]]
    result = str(requests[1]["messages"][-1])
    for location in ("a.py:1:5", "a.py:4:7", "b.py:1:15", "b.py:3:1"):
        assert location in result, result
    assert "greet('b')" in result  # the line's text


# -- focus -----------------------------------------------------------------------------------


def test_a_visual_selection_goes_with_the_prompt_as_focus(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("one = 1\ntwo = 2\nthree = 3\nfour = 4\n")
    editor.fake_llm.set_script({"turns": [{"text": "Seen."}, {"text": "Again."}]})
    editor.edit(path)
    # select from "wo" on line 2 to "thr" on line 3, then :'<,'>LspAgent chat
    editor.set_cursor(2, 1)
    editor.type("vjl<Esc>")
    editor.wait(lambda: editor.nvim.request("nvim_get_mode")["mode"] == "n", "normal mode")
    editor.command("'<,'>LspAgent chat")
    editor.wait_insert()
    chip = editor.wait_lua(f"require('lsp_agent.chat').chip_text({VIEW})", "the chip")
    assert chip.startswith("▸ a.py:2-3"), chip
    extmarks = editor.lua(
        f"return vim.api.nvim_buf_get_extmarks({VIEW}.prompt_buf,"
        " vim.api.nvim_get_namespaces().lsp_agent_focus, 0, -1, { details = true })"
    )
    assert extmarks[0][3]["virt_lines"][0][0][0] == chip  # shown above the prompt text
    prompt_win = editor.lua("return require('lsp_agent.chat').prompt_win")
    assert editor.in_window(prompt_win, "vim.fn.winsaveview().topfill") == 1  # on screen
    session_id = editor.session()["id"]
    blocks, context = editor.lua(
        "return {require('lsp_agent.chat').prompt_parts(...)}", session_id, "what is this?"
    )
    assert context == {
        "activeDocument": {"uri": path.as_uri()},
        "cursor": {"line": 2, "character": 2},
        "selection": {"start": {"line": 1, "character": 1}, "end": {"line": 2, "character": 3}},
        "selectedText": "wo = 2\nthr",
    }
    params = {"sessionId": session_id, "prompt": blocks, "context": context}
    assert violations(SCHEMA["methods"]["agent/session/prompt"]["params"], params) == []
    editor.type("what is this?<C-s>")
    editor.wait_chat("Seen.")
    editor.wait_idle()
    first = str(editor.model_requests()[0]["messages"])
    assert "what is this?" in first
    assert "wo = 2\\nthr" in first  # the selected text, exactly
    assert "a.py:2-3" in first  # and its range
    assert "four = 4" not in first

    # sent once: the next prompt's focus is the file and the cursor only
    chip = editor.wait_lua(
        f"require('lsp_agent.chat').chip_text({VIEW}) ~= nil"
        f" and not require('lsp_agent.chat').chip_text({VIEW}):find(':')"
        f" and require('lsp_agent.chat').chip_text({VIEW})",
        "the chip without the selection",
    )
    assert chip.startswith("▸ a.py"), chip


def test_the_focus_chip_removed_sends_no_focus(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    editor.fake_llm.set_script({"turns": [{"text": "Without focus."}]})
    editor.edit(path)
    editor.command("LspAgent chat")
    editor.wait_insert()
    editor.type("<C-f>")  # removes the chip for this prompt
    editor.wait_lua(f"{VIEW}.focus_off", "the chip removed")
    assert "not sent" in editor.lua(f"return require('lsp_agent.chat').chip_text({VIEW})")
    editor.type("hello<C-s>")
    editor.wait_chat("Without focus.")
    editor.wait_idle()
    first = str(editor.model_requests()[0]["messages"])
    assert "hello" in first
    assert "Active file" not in first
    assert "Editor context" not in first
    # back for the next prompt
    assert editor.lua(f"return {VIEW}.focus_off") is False


def test_send_focus_off_sends_no_focus_and_shows_no_chip(editor: Any, workspace: Path) -> None:
    editor.setup(send_focus=False)
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    editor.edit(path)
    editor.command("LspAgent chat")
    editor.wait_insert()
    assert editor.lua(f"return require('lsp_agent.chat').chip_text({VIEW})") is None
    session_id = editor.wait(lambda: editor.session().get("id"), "the session")
    parts = "return {require('lsp_agent.chat').prompt_parts(...)}"
    _, context = editor.lua(parts, session_id, "hi")
    assert not context
    # `#selection` sends the selection all the same (and only it)
    editor.type("<Esc>")
    editor.focus_buffer(path)
    editor.command("1LspAgent chat")
    _, context = editor.lua(parts, session_id, "explain #selection")
    assert context == {
        "selection": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 9}},
        "selectedText": "value = 1",
    }


# -- mentions --------------------------------------------------------------------------------


def git(workspace: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True)


def test_mentions_complete_files_symbols_and_names(editor: Any, workspace: Path) -> None:
    a, _ = write_files(workspace)
    (workspace / "ignored.py").write_text("secret = 1\n")
    (workspace / ".gitignore").write_text("ignored.py\n")
    git(workspace, "init", "-q")
    git(workspace, "add", "a.py")  # b.py untracked: still listed (--others)
    start_words_server(editor)
    editor.edit(a)
    wait_words_attached(editor, a)
    root = str(workspace)
    words = (
        "return vim.tbl_map(function(i) return i.word end,"
        " require('lsp_agent.mentions').items(...))"
    )
    files = editor.lua(words, "@", root)
    assert "@a.py" in files
    assert "@b.py" in files
    assert "@ignored.py" not in files
    assert editor.lua(words, "@bpy", root)[0] == "@b.py"  # fuzzy
    # a workspace symbol: asked without waiting, there once the server answered
    editor.wait(lambda: "@greet" in editor.lua(words, "@gre", root), "the symbol")
    assert set(editor.lua(words, "#di", root)) == {"#diff", "#diagnostics", "#diagnostics:file"}
    assert editor.lua(words, "#", root) == [
        "#buffers",
        "#diagnostics",
        "#diagnostics:file",
        "#diff",
        "#selection",
    ]

    # typed in the prompt area: `@` opens the completion menu
    editor.command("LspAgent chat")
    editor.wait_insert()
    editor.type("see @")
    editor.wait(lambda: editor.lua("return vim.fn.pumvisible()") == 1, "the completion menu")
    shown = editor.lua(
        "return vim.tbl_map(function(i) return i.word end, vim.fn.complete_info({'items'}).items)"
    )
    assert "@a.py" in shown
    # a symbol, from the words server, completed again with <C-x><C-o>: its range is kept
    menu = "return vim.tbl_map(function(i) return i.word end, vim.fn.complete_info().items)"
    editor.type("gree<C-x><C-o>")  # not asked yet: the menu opens again with it
    shown = editor.wait(
        lambda: "@greet" in (words := editor.lua(menu)) and words, "the symbol in the menu"
    )
    editor.type("<C-n>" * (shown.index("@greet") + 1) + "<C-y>")
    editor.wait_lua(f"{VIEW}.symbols['@greet'] ~= nil", "the completed symbol remembered")
    assert editor.lua(f"return {VIEW}.symbols['@greet']") == {
        "uri": a.as_uri(),
        "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}},
    }
    editor.type("<Esc>")


def test_mentions_become_blocks(editor: Any, workspace: Path) -> None:
    a, _ = write_files(workspace)
    editor.edit(a)
    editor.command("LspAgent chat")
    session_id = editor.wait(lambda: editor.session().get("id"), "the session")
    editor.lua(
        "require('lsp_agent.chat').views[...].symbols['@greet'] = {uri = select(2, ...),"
        " range = {start = {line = 0, character = 4}, ['end'] = {line = 0, character = 9}}}",
        session_id,
        a.as_uri(),
    )
    text = "compare @a.py, @greet and @missing.py; #diff #selection #diagnostics:file #nope"
    blocks, context = editor.lua(
        "return {require('lsp_agent.chat').prompt_parts(...)}", session_id, text
    )
    params = {"sessionId": session_id, "prompt": blocks, "context": context}
    assert violations(SCHEMA["methods"]["agent/session/prompt"]["params"], params) == []
    assert blocks == [
        {"type": "text", "text": text},
        {"type": "resource_link", "uri": a.as_uri()},
        {
            "type": "resource_link",
            "uri": a.as_uri(),
            "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}},
        },
        {"type": "mention", "name": "diff"},
        {"type": "mention", "name": "selection"},
        {"type": "mention", "name": "diagnostics", "uri": a.as_uri()},
    ]


def test_an_at_file_mention_puts_the_files_text_in_the_request(
    editor: Any, workspace: Path
) -> None:
    a, b = workspace / "a.py", workspace / "b.py"
    a.write_text("MARKER_OF_A = 41\n")
    b.write_text("x = 1\n")
    editor.fake_llm.set_script({"turns": [{"text": "It sets a marker."}]})
    editor.edit(b)
    editor.command("LspAgent chat")
    editor.wait_insert()
    editor.type("what is in @a.py ?<C-s>")
    editor.wait_chat("It sets a marker.")
    editor.wait_idle()
    first = str(editor.model_requests()[0]["messages"])
    assert "what is in @a.py ?" in first
    assert "MARKER_OF_A = 41" in first


# -- the gauge -------------------------------------------------------------------------------


def test_the_gauge_shows_the_context_share_and_offers_to_compact(
    editor: Any, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor.fake_llm.set_script({"turns": [{"text": "First answer."}]})
    editor.edit(path)
    editor.command("LspAgent chat hello")
    editor.wait_chat("First answer.")
    editor.wait_idle()
    chat_win = editor.lua("return require('lsp_agent.chat').win")

    def statusline() -> str:
        return editor.lua(
            "local win = ...; return vim.api.nvim_eval_statusline(vim.wo[win].statusline,"
            " { winid = win }).str",
            chat_win,
        )

    gauge = editor.wait(lambda: statusline().startswith("ctx ▕") and statusline(), "the gauge")
    assert "%" in gauge, gauge
    assert "Compact now" not in gauge, gauge

    usage = {"contextUsed": 170000, "contextSize": 200000, "cost": 0.25}
    text = editor.lua("return require('lsp_agent.chat').gauge_text({ usage = ... }, 200)", usage)
    assert text == "ctx ▕█████████░▏ 85% · $0.2500 · Compact now: :LspAgent compact"

    editor.command("LspAgent compact")
    editor.wait_chat("conversation compacted")
