"""The chat buffer in a real Neovim: streamed answers, folded reasoning, tool lines with a
jump, the plan, the winbar, questions, and a chat rebuilt from the server after closing."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def test_chat_then_a_prompt_shows_the_streamed_answer(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("print('hello')\n")
    answer = ["It ", "prints ", "hello ", "to ", "stdout."]
    editor.fake_llm.set_script({"turns": [{"text": answer, "chunk_delay": 0.15}]})
    editor.edit(path)

    editor.command("LspAgent chat")
    editor.wait_lua("require('lsp_agent.session').current ~= nil", "a session")
    editor.wait_insert()  # the cursor waits in the prompt area, in insert mode
    editor.type("what does a.py do?<C-s>")

    # streamed: a part of the answer is on screen before the whole of it
    editor.wait(
        lambda: "It prints" in editor.chat_text() and "stdout." not in editor.chat_text(),
        "a partial answer",
    )
    editor.wait_chat("It prints hello to stdout.")
    editor.wait_idle()
    lines = editor.chat_lines()
    assert "## You" in lines
    assert "what does a.py do?" in lines
    assert "## Agent" in lines
    assert editor.lua("return vim.api.nvim_buf_get_option(0, 'filetype')") == "markdown"
    # the prompt area was emptied; the model got the prompt and the active document
    prompt_buf = editor.lua("return vim.api.nvim_get_current_buf()")
    assert editor.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", prompt_buf) == [""]
    [request] = editor.model_requests()
    sent = str(request["messages"])
    assert "what does a.py do?" in sent
    assert "Active file: a.py" in sent  # the focus, relative to the workspace


def test_reasoning_is_folded_tools_are_lines_with_a_jump_and_usage_is_in_the_winbar(
    editor: Any, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("one = 1\ntwo = 2\nthree = 3\n")
    todos = [
        {"content": "Read a.py", "status": "completed"},
        {"content": "Explain it", "status": "in_progress"},
    ]
    editor.fake_llm.set_script(
        {
            "turns": [
                {
                    "thinking": "Let me look at the file first.",
                    "tool_calls": [
                        {"name": "read", "input": {"file_path": str(path)}},
                        {"name": "todowrite", "input": {"todos": todos}},
                    ],
                },
                {"text": "Three assignments."},
            ]
        }
    )
    editor.command("LspAgent chat what is in a.py?")
    editor.wait_chat("Three assignments.")
    editor.wait_idle()
    lines = editor.chat_lines()

    # reasoning: a closed fold
    thinking = lines.index("> _Thinking_") + 1
    assert "> Let me look at the file first." in lines
    chat_win = editor.lua("return require('lsp_agent.chat').win")
    assert editor.in_window(chat_win, f"vim.fn.foldclosed({thinking})") == thinking

    # one line per tool call with its status and location
    [read_line] = [line for line in lines if " read " in line]
    assert "[done]" in read_line
    assert "a.py" in read_line
    # the plan
    assert "### Plan" in lines
    assert "- [x] Read a.py" in lines
    assert "- [~] Explain it" in lines

    # the winbar: title, mode and model, context use, state
    winbar = editor.in_window(chat_win, "require('lsp_agent.chat').winbar()")
    assert "build" in winbar
    assert "anthropic/claude-test" in winbar
    assert "ctx " in winbar
    assert "idle" in winbar
    assert editor.lua("return require('lsp_agent').statusline()").startswith("agent: idle")

    # <CR> on the tool line opens the file
    editor.lua("vim.api.nvim_set_current_win(...)", chat_win)
    editor.set_cursor(lines.index(read_line) + 1)
    editor.type("<CR>")
    editor.wait(
        lambda: editor.lua("return vim.api.nvim_buf_get_name(0)") == str(path),
        "the jump to a.py",
    )


def test_the_chat_survives_closing_and_is_rebuilt_from_the_server(
    editor: Any, workspace: Path
) -> None:
    editor.fake_llm.set_script({"turns": [{"text": "First answer."}, {"text": "Second answer."}]})
    editor.command("LspAgent chat first question")
    editor.wait_chat("First answer.")
    editor.wait_idle()
    session_id = editor.session()["id"]

    editor.type("q")  # the prompt area's close key closes the chat
    editor.wait_lua("require('lsp_agent.chat').win == nil", "the chat to close")
    assert editor.lua("return #vim.api.nvim_list_wins()") == 1

    editor.command("LspAgent chat")
    editor.wait_chat("First answer.")
    assert editor.lua(
        "return require('lsp_agent.log').contains(...)",
        f"loading session {session_id} (replay full)",
    )
    assert editor.session()["id"] == session_id
    assert "first question" in editor.chat_lines()

    # a follow-up in the same session
    editor.wait_insert()
    editor.type("second question<C-s>")
    editor.wait_chat("Second answer.")
    editor.wait_idle()
    assert editor.session()["id"] == session_id
    second = str(editor.model_requests()[1]["messages"])
    assert "First answer." in second
    assert "second question" in second

    # :LspAgent sessions lists it (real vim.ui.select); picking it opens it again
    editor.command("LspAgent sessions")
    record = editor.wait_select(1)
    assert any(session_id in item for item in record["items"])
    editor.choose(record, next(i for i in record["items"] if session_id in i))
    editor.wait_chat("Second answer.")

    # mode: the session's option changes and the winbar shows it
    editor.command("LspAgent mode plan")
    winbar = "require('lsp_agent.chat').winbar_text(require('lsp_agent.session').sessions[...])"
    editor.wait(lambda: "plan" in editor.lua("return " + winbar, session_id), "plan in the winbar")


def test_questions_single_choice_in_select_and_multiple_in_a_scratch_buffer(
    editor: Any, workspace: Path
) -> None:
    questions = [
        {
            "question": "Which test runner?",
            "header": "Runner",
            "options": [{"label": "pytest"}, {"label": "unittest"}],
            "multiple": False,
        },
        {
            "question": "Which checks should run?",
            "header": "Checks",
            "options": [{"label": "ruff"}, {"label": "mypy"}, {"label": "pytest"}],
            "multiple": True,
        },
    ]
    editor.fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "question", "input": {"questions": questions}}]},
                {"text": "Thanks."},
            ]
        }
    )
    editor.command("LspAgent chat set up the checks")
    record = editor.wait_select(1)
    assert record["kind"] == "lsp_agent_question"
    assert record["items"][:2] == ["pytest", "unittest"]
    editor.choose(record, "unittest")

    # the multiple-choice question: a small scratch buffer with checkboxes
    editor.wait(
        lambda: editor.lua("return vim.api.nvim_buf_get_name(0)").startswith(
            "lsp-agent://question/"
        ),
        "the question buffer",
    )
    lines = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert "[ ] ruff" in lines
    editor.set_cursor(lines.index("[ ] ruff") + 1)
    editor.type("x")
    editor.set_cursor(lines.index("[ ] mypy") + 1)
    editor.type("x")
    editor.type("GA also black<Esc>")
    editor.type("<CR>")

    editor.wait_chat("Thanks.")
    editor.wait_idle()
    answered = str(editor.model_requests()[1]["messages"])
    assert "unittest" in answered
    assert "ruff" in answered
    assert "mypy" in answered
    assert "also black" in answered


def test_every_window_layout_opens_the_chat_with_its_prompt_area(editor: Any) -> None:
    editor.fake_llm.set_script({"turns": [{"text": "Hello."}]})
    editor.command("LspAgent chat hi")
    editor.wait_chat("Hello.")
    editor.wait_idle()
    win = "require('lsp_agent.chat').win"
    prompt_win = "require('lsp_agent.chat').prompt_win"
    # the default: a vertical split on the right, the prompt area below the chat
    assert editor.lua(f"return vim.api.nvim_win_get_position({win})[2]") > 0
    assert editor.lua(
        f"return vim.api.nvim_win_get_position({prompt_win})[1]"
        f" > vim.api.nvim_win_get_position({win})[1]"
    )
    checks = {
        "horizontal": f"vim.api.nvim_win_get_width({win}) == vim.o.columns",
        "tab": "#vim.api.nvim_list_tabpages() == 2",
        "float": f"vim.api.nvim_win_get_config({win}).relative == 'editor'"
        f" and vim.api.nvim_win_get_config({prompt_win}).relative == 'editor'",
        "vertical": f"vim.api.nvim_win_get_position({win})[2] == 0",
    }
    for layout, check in checks.items():
        position = "left" if layout == "vertical" else "bottom"
        editor.lua("require('lsp_agent.chat').close()")
        editor.setup(window={"layout": layout, "position": position})
        editor.command("LspAgent chat")
        editor.wait_chat("Hello.")
        assert editor.lua(f"return {check}"), layout
        assert editor.lua("return vim.api.nvim_get_current_win()") == editor.lua(
            f"return {prompt_win}"
        )
        editor.type("<Esc>")

    editor.command("LspAgent log")
    log = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert any("prompt admitted" in line for line in log)
    assert any("Neovim's LSP log" in line for line in log)


RENDER_WINBAR = """
local win = ...
return vim.api.nvim_eval_statusline(vim.wo[win].winbar, { winid = win, use_winbar = true })
"""


def test_the_winbar_fits_the_default_chat_width_and_keeps_mode_and_model(
    editor: Any, workspace: Path
) -> None:
    title = "Refactor the configuration loader so that it validates every key"
    editor.fake_llm.set_script({"turns": [{"text": "Hello."}], "side_text": title})
    editor.command("LspAgent chat hi")
    editor.wait_chat("Hello.")
    editor.wait_idle()
    editor.wait(lambda: editor.session()["title"] == title, "the session's title")

    def rendered(win: int) -> dict[str, Any]:
        return editor.lua(RENDER_WINBAR, win)

    for columns in (80, 120, 200):  # 80: a default terminal, the chat is 0.4 of it
        editor.command(f"set columns={columns}")
        editor.lua("require('lsp_agent.chat').close()")
        editor.command("LspAgent chat")
        chat_win = editor.lua("return require('lsp_agent.chat').win")
        prompt_win = editor.lua("return require('lsp_agent.chat').prompt_win")
        editor.wait_chat("Hello.")
        width = editor.lua("return vim.api.nvim_win_get_width(...)", chat_win)
        bar = rendered(chat_win)
        assert bar["width"] <= width, (columns, bar)
        text = bar["str"]
        assert "build" in text, (columns, text)
        assert "claude-test" in text, (columns, text)
        assert "idle" in text, (columns, text)
        if width >= 60:  # room for a title: it is cut, not the rest
            assert "Refactor the" in text, (columns, text)
        if width >= 80:
            assert "anthropic/claude-test" in text, (columns, text)
        prompt_bar = rendered(prompt_win)
        assert prompt_bar["width"] <= width
        assert prompt_bar["str"].startswith("Prompt"), (columns, prompt_bar)
        assert "<CR>" in prompt_bar["str"], (columns, prompt_bar)


def test_lsp_agent_alone_opens_the_chat_in_normal_mode(editor: Any, workspace: Path) -> None:
    editor.command("LspAgent")
    editor.wait_lua(
        "require('lsp_agent.chat').prompt_win ~= nil"
        " and vim.api.nvim_get_current_win() == require('lsp_agent.chat').prompt_win",
        "the prompt area focused",
    )
    # normal mode: `q` is the prompt area's close key, not a typed letter
    editor.type("q")
    editor.wait_lua("require('lsp_agent.chat').win == nil", "the chat closed by q")
    assert editor.nvim.request("nvim_get_mode")["mode"] == "n"
    # `:LspAgent chat` is for writing: there the cursor waits in insert mode
    editor.command("LspAgent chat")
    editor.wait_insert()
