"""The Neovim chat as a panel (issue 35): a working indicator while a turn runs, prompts typed
during a turn marked queued until their turn starts, tool lines titled by the server, and a
refused call that reads "refused", not "failed"."""

from __future__ import annotations

from typing import Any

WINBAR = "require('lsp_agent.chat').winbar()"


def chat_winbar(editor: Any) -> str:
    chat_win = editor.lua("return require('lsp_agent.chat').win")
    return str(editor.in_window(chat_win, WINBAR))


def test_the_winbar_shows_a_turning_working_indicator_during_a_turn_and_not_after(
    editor: Any,
) -> None:
    editor.fake_llm.set_script({"turns": [{"text": ["Half ", "done."], "hold_after": 3}]})
    editor.command("LspAgent chat take your time")
    editor.wait(lambda: editor.session().get("state") == "running", "the turn running")
    first = editor.wait(
        lambda: "working…" in (bar := chat_winbar(editor)) and bar, "working… in the winbar"
    )
    # the spinner turns: another frame comes while the turn still runs
    editor.wait(
        lambda: (bar := chat_winbar(editor)) != first and "working…" in bar, "the next frame"
    )
    frames = editor.lua("return require('lsp_agent.chat.spinner').FRAMES")
    assert any(frame in first for frame in frames)

    editor.fake_llm.release()
    editor.wait_chat("Half done.")
    editor.wait_idle()
    editor.wait(lambda: "working…" not in chat_winbar(editor), "the indicator gone")
    assert "idle" in chat_winbar(editor)
    assert not any(frame in chat_winbar(editor) for frame in frames)


def test_a_prompt_sent_during_a_turn_is_marked_queued_below_it_until_its_turn_starts(
    editor: Any,
) -> None:
    editor.fake_llm.set_script(
        {
            "turns": [
                {"text": ["The first ", "answer."], "hold_after": 4},
                {"text": "The second answer."},
            ]
        }
    )
    editor.command("LspAgent chat first question")
    editor.wait_chat("The first ")
    # typed in the prompt area and sent while the first turn runs
    editor.lua(
        "local view = require('lsp_agent.chat').views[...]"
        " vim.api.nvim_buf_set_lines(view.prompt_buf, 0, -1, false, { 'second question' })"
        " require('lsp_agent.chat').submit(...)",
        editor.session()["id"],
    )
    lines = editor.wait(
        lambda: "## You (queued: sent when the turn ends)" in (ls := editor.chat_lines()) and ls,
        "the second prompt marked queued",
    )
    assert lines.index("## You (queued: sent when the turn ends)") > lines.index("The first ")

    editor.fake_llm.release()
    editor.wait_chat("The second answer.")
    editor.wait_idle()
    lines = editor.chat_lines()
    assert not any("queued" in line for line in lines), lines
    # the first answer stayed in one piece, above the prompt that waited for it
    assert "The first answer." in lines
    order = [
        lines.index("first question"),
        lines.index("The first answer."),
        lines.index("second question"),
        lines.index("The second answer."),
    ]
    assert order == sorted(order), lines
    assert lines.count("## You") == 2
    assert lines.count("## Agent") == 2


def render_tool(editor: Any, *updates: dict[str, Any]) -> list[str]:
    """The tool lines the chat renders for `updates` of one tool call (no server needed)."""
    return editor.lua(
        """
        local session = require('lsp_agent.session')
        local s = session.new('ses_titles')
        for _, u in ipairs({...}) do
          s:apply(vim.tbl_extend('force', { sessionUpdate = 'tool_call_update',
            toolCallId = 'call_1', messageId = 'msg_1', toolName = 'bash', kind = 'execute' }, u))
        end
        local lines = require('lsp_agent.chat').render_lines(s)
        return vim.tbl_filter(function(l) return l:match('^%- ') end, lines)
        """,
        *updates,
    )


def test_a_tool_line_shows_the_title_the_server_sent_and_never_guesses_one(editor: Any) -> None:
    [line] = render_tool(
        editor,
        {"status": "pending", "title": "Run python3 hello.py", "rawInput": {"command": "x"}},
    )
    assert line == "- ○ bash Run python3 hello.py [pending]"
    # no title yet: the tool's name, not words guessed from its input
    [line] = render_tool(editor, {"status": "pending", "rawInput": {"command": "rm -rf build"}})
    assert line == "- ○ bash [pending]"


def test_a_refused_call_reads_refused_not_failed(editor: Any) -> None:
    [line] = render_tool(
        editor,
        {"status": "pending", "title": "Run curl example.com"},
        {"status": "failed", "refused": True, "content": [{"type": "text", "text": "Denied."}]},
    )
    assert line == "- ⊘ bash Run curl example.com [refused]"
    # a call that really failed still reads failed
    [line] = render_tool(editor, {"status": "failed", "title": "Run make"})
    assert line == "- ✗ bash Run make [failed]"


def test_the_diff_tab_labels_and_winbars_name_the_file_at_80_and_160_columns(
    editor: Any, workspace: Any
) -> None:
    """Issue 35: the diff tab's winbar and tab labels were cut off (the tab read
    `2 l//d/c/p/s/p/module.py`, the proposal's winbar lost the file name at 80 columns)."""
    path = workspace / "src" / "pkg" / "module.py"
    path.parent.mkdir(parents=True)
    path.write_text("value = 1\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    script = {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "Done."}]}
    editor.fake_llm.set_script(script)
    editor.command("set columns=80")
    editor.command("LspAgent chat set value to 2")
    editor.choose(editor.wait_select(1), "View diff")
    editor.wait_lua("vim.t.lsp_agent_diff ~= nil", "the diff tab")

    for columns in (80, 160):
        editor.command(f"set columns={columns}")
        editor.command("wincmd =")  # both sides share the width, as when the tab opens
        editor.command("redraw!")
        tabline, winbars = editor.screen_rows()[:2]
        assert "Δ module.py" in tabline, tabline
        assert len(tabline.rstrip()) <= columns
        half = columns // 2
        current, proposed = winbars[:half], winbars[half:]
        assert "current: src/pkg/module.py" in current, winbars
        assert "proposed (editable): src/pkg/module.py" in proposed, winbars
        if columns == 160:
            assert "q: back to the permission prompt" in proposed, winbars

    editor.type("q")  # back to the prompt; the tab line is Neovim's own again
    editor.choose(editor.wait_select(2), "Allow once")
    editor.wait_chat("Done.")
    editor.wait_idle()
    assert editor.lua("return vim.o.tabline") == ""


def test_a_command_ask_says_the_command_once(editor: Any) -> None:
    """Issue 35: the ask read "Run: python3 hello.py — $ python3 hello.py"."""
    describe = "return require('lsp_agent.permission').describe(...)"
    subject = {"type": "command", "command": "python3 hello.py"}
    ask = {"title": "Run: python3 hello.py", "permission": "bash", "subject": subject}
    assert editor.lua(describe, ask) == "lsp-agent: Run: python3 hello.py"
    described = {**ask, "description": "Say hello"}
    assert editor.lua(describe, described) == "lsp-agent: Run: python3 hello.py — Say hello"
    # a title that does not say the command: the command is the detail, once
    other = {**ask, "title": "Let this command use the network"}
    assert (
        editor.lua(describe, other)
        == "lsp-agent: Let this command use the network — $ python3 hello.py"
    )


def test_the_server_titles_a_pending_call_and_a_rule_refusal_reads_refused(
    editor: Any, workspace: Any
) -> None:
    """Against the real server: the pending card has the server's title (no guess from the
    input), and a call a rule refused reads refused, not failed."""
    # a list: a Lua table has no order, and the last matching rule wins
    rules = {"permission": {"bash": [{"*": "ask"}, {"curl *": "deny"}]}}
    editor.setup(server_config=rules)
    run = {"name": "bash", "input": {"command": "python3 hello.py"}}
    curl = {"name": "bash", "input": {"command": "curl example.com"}}
    editor.fake_llm.set_script(
        {"turns": [{"tool_calls": [run]}, {"tool_calls": [curl]}, {"text": "Done."}]}
    )
    (workspace / "hello.py").write_text("print('hi')\n")
    editor.command("LspAgent chat run it")
    asked = editor.wait_select(1)
    assert asked["prompt"] == "lsp-agent: Run: python3 hello.py"
    editor.wait(
        lambda: "- ◐ bash Run python3 hello.py [awaiting permission]" in editor.chat_lines(),
        "the pending card titled by the server",
    )
    editor.choose(asked, "Allow once")
    editor.wait_chat("Done.")
    editor.wait_idle()
    lines = editor.chat_lines()
    assert "- ✓ bash Run python3 hello.py [exit 0]" in lines
    assert "- ⊘ bash Run curl example.com [refused]" in lines


def test_each_until_green_check_is_a_notice_in_the_chat(editor: Any) -> None:
    lines = editor.lua(
        """
        local s = require('lsp_agent.session').new('ses_until')
        for _, u in ipairs({...}) do
          s:apply(vim.tbl_extend('force', { sessionUpdate = 'until_update', command = 'make test',
            maxAttempts = 5 }, u))
        end
        return require('lsp_agent.chat').render_lines(s)
        """,
        {"attempt": 1, "verdict": "retry", "exitCode": 2},
        {"attempt": 2, "verdict": "passed", "exitCode": 0},
    )
    text = "\n".join(lines)
    assert "until green: attempt 1/5: make test exited 2; its output goes to the agent" in text
    assert "until green: attempt 2/5: make test exited 0" in text


def test_an_image_in_a_user_message_shows_as_a_line(editor: Any) -> None:
    shown = editor.lua(
        "return require('lsp_agent.util').blocks_text(...)",
        [
            {"type": "text", "text": "why is this cut off?"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo=", "name": "shot.png"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        ],
    )
    assert shown == "why is this cut off?\n[image: shot.png]\n[image]"
