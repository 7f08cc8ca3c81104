"""Issue 36 end to end in Neovim: real headless Neovim, the real ``lsp-agent serve`` and the
fake LLM's fill-in-the-middle ``/v1/completions`` — typing shows the model's ghost text, `<Tab>`
accepts it into the buffer, and nothing stale is shown. The plugin's finer rules are
``test_completion_plugin.py`` (a scripted server)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from lsp_agent.storage.event_log import open_store
from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.lsp.test_inline_completion import completion_config, fim_requests
from tests.nvim.conftest import Editor
from tests.nvim.test_completion_plugin import NEXT_EDIT, ghost
from tests.support.user_config import write_user_config


def inline_requests(fake: FakeLLMServer) -> list[Any]:
    """The fill-in-the-middle requests of ghost text (next edits ask without a suffix)."""
    return [r for r in fim_requests(fake) if "suffix" in r.body]


def session_events(data_dir: Path, session_id: str) -> list[Any]:
    async def read() -> list[Any]:
        async with await open_store(data_dir) as store:
            return list(await store.events(session_id))

    return asyncio.run(read())


def test_typing_shows_the_models_ghost_text_and_tab_accepts_it(
    editor: Editor, fake_llm: FakeLLMServer, workspace: Path, tmp_path: Path
) -> None:
    fake_llm.set_script({"turns": [{"text": "Hello."}], "completions": [{"text": "a + b"}]})
    write_user_config(completion_config(fake_llm))
    path = workspace / "calc.py"
    path.write_text("def add(a, b):\n")
    editor.edit(path)
    # a session in the folder: the accept is recorded in it
    editor.command("LspAgent chat hello")
    editor.wait_chat("Hello.", timeout=30)
    editor.wait_idle()
    editor.focus_buffer(path)
    editor.command("stopinsert")
    assert editor.lua(
        "return vim.lsp.get_clients({name = 'lsp_agent'})[1]"
        ".server_capabilities.inlineCompletionProvider ~= nil"
    )
    editor.set_cursor(1, 0)
    editor.type("o    return ")
    editor.wait(lambda: ghost(editor) == ["a + b"], "the model's ghost text", timeout=30)
    [request] = inline_requests(fake_llm)
    assert request.body["prompt"].endswith("def add(a, b):\n    return ")
    assert editor.buffer_text(path) == "def add(a, b):\n    return "
    editor.type("<Tab>")
    editor.wait(
        lambda: editor.buffer_text(path) == "def add(a, b):\n    return a + b",
        "the ghost text in the buffer",
    )
    assert ghost(editor) == []
    assert editor.nvim.request("nvim_get_mode")["mode"] == "i"
    session_id = editor.session()["id"]

    def feedback() -> list[Any]:
        events = session_events(tmp_path / "data", session_id)
        return [e for e in events if e.type == "suggestion_feedback"]

    editor.wait(feedback, "the accept recorded in the session", timeout=30)
    [recorded] = feedback()
    assert recorded.data["kind"] == "inline"
    assert recorded.data["accepted"] is True


def test_no_ghost_text_without_completion_enabled(
    editor: Editor, fake_llm: FakeLLMServer, workspace: Path
) -> None:
    fake_llm.set_script({"completions": [{"text": "a + b"}]})
    path = workspace / "calc.py"
    path.write_text("def add(a, b):\n")
    editor.edit(path)
    editor.set_cursor(1, 0)
    editor.type("o    return ")
    editor.wait_lua("vim.fn.mode() == 'i'", "insert mode")
    assert editor.lua("return next(require('lsp_agent.completion').buffers) == nil")
    # <Tab> is Neovim's own (0.11 maps it for snippets), not the plugin's
    assert editor.lua("return vim.fn.maparg('<Tab>', 'i', false, true).buffer") != 1
    assert fim_requests(fake_llm) == []


def test_a_late_answer_for_text_typed_over_is_not_shown(
    editor: Editor, fake_llm: FakeLLMServer, workspace: Path
) -> None:
    # the first answer comes late; the keystroke meanwhile cancels it, and the second is shown
    fake_llm.set_script({"completions": [{"text": "STALE", "delay": 1.5}, {"text": "fresh"}]})
    write_user_config(completion_config(fake_llm))
    editor.setup(next_edit={"enabled": False})  # only ghost text asks the script's answers
    path = workspace / "late.py"
    path.write_text("\n")
    editor.edit(path)
    editor.type("ix = ")
    editor.wait(lambda: inline_requests(fake_llm), "the first model request", timeout=30)
    editor.type("y")
    editor.wait(lambda: ghost(editor) == ["fresh"], "the fresh ghost text", timeout=30)
    log_lines = editor.lua("return require('lsp_agent.log').lines()")
    assert not any("STALE" in entry for entry in log_lines), log_lines
    assert editor.buffer_text(path) == "x = y"


def test_the_hourly_cap_is_told_once_and_the_ghost_text_stops(
    editor: Editor, fake_llm: FakeLLMServer, workspace: Path
) -> None:
    fake_llm.set_script({"completions": [{"text": "one"}, {"text": "two"}]})
    write_user_config(completion_config(fake_llm, max_tokens_per_hour=1))
    editor.setup(next_edit={"enabled": False})  # only ghost text spends the tokens
    path = workspace / "cap.py"
    path.write_text("\n")
    editor.edit(path)
    editor.type("ix = ")
    editor.wait(lambda: ghost(editor) == ["one"], "the first ghost text", timeout=30)
    editor.type("y")  # the first answer spent the hour's tokens
    editor.wait_lua(
        "require('lsp_agent.log').contains('inline completion paused')", "the cap's note"
    )
    editor.type("z")
    editor.wait(lambda: len(fim_requests(fake_llm)) == 1 and ghost(editor) == [], "no ghost")
    warnings = [
        entry
        for entry in editor.lua("return require('lsp_agent.log').lines()")
        if "paused" in entry
    ]
    assert len(warnings) == 1, warnings
    assert "WARN" in warnings[0]
    assert "completion.max_tokens_per_hour = 1" in warnings[0]


AREA = "def area(width):\n    return width * width\n\n\nprint(area(3))\n"


def test_after_the_agents_edit_a_next_edit_elsewhere_is_shown_accepted_and_recorded(
    editor: Editor, fake_llm: FakeLLMServer, workspace: Path, tmp_path: Path
) -> None:
    path = workspace / "area.py"
    path.write_text(AREA)
    edit = {
        "file_path": str(path),
        "old_string": "area(width)",
        "new_string": "area(width, height)",
    }
    fake_llm.set_script(
        {
            "turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "Renamed."}],
            "completions": [
                {"text": "EDIT 5-5\nprint(area(3, 4))\nEND\nREASON: the new parameter at the call"}
            ],
        }
    )
    config = completion_config(fake_llm)
    config["permission"] = {"edit": "allow"}
    write_user_config(config)
    editor.edit(path)
    editor.command("LspAgent chat add a height parameter")
    editor.wait_chat("Renamed.", timeout=30)
    editor.wait_idle()
    editor.focus_buffer(path)
    editor.command("stopinsert")
    assert editor.buffer_text(path).startswith("def area(width, height):")
    # the agent's edit landed: the plugin asked for the next edit, and it is shown at line 5
    editor.wait(lambda: editor.lua(NEXT_EDIT), "the next-edit suggestion", timeout=30)
    marks = editor.lua(NEXT_EDIT)
    assert any(m["row"] == 4 and "3, 4" in m["text"] for m in marks), marks
    assert any("the new parameter" in m["text"] for m in marks), marks
    editor.type("<Tab>")
    editor.wait(lambda: editor.lua("return vim.api.nvim_win_get_cursor(0)")[0] == 5, "the jump")
    editor.type("<Tab>")
    editor.wait(lambda: "print(area(3, 4))" in editor.buffer_text(path), "the accepted edit")
    assert editor.lua(NEXT_EDIT) == []
    session_id = editor.session()["id"]
    data_dir = tmp_path / "data"

    def feedback() -> list[Any]:
        return [e for e in session_events(data_dir, session_id) if e.type == "suggestion_feedback"]

    editor.wait(feedback, "the feedback recorded in the session", timeout=30)
    [recorded] = feedback()
    assert recorded.data["accepted"] is True
    assert recorded.data["kind"] == "next_edit"
    assert recorded.data["uri"] == path.as_uri()


def test_checkhealth_says_whether_ghost_text_is_on_for_the_folder(
    editor: Editor, fake_llm: FakeLLMServer
) -> None:
    def report() -> str:
        editor.command("checkhealth lsp_agent")
        return "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))

    off = report()
    assert "inline completion and next edits" in off
    assert "off for this folder: the server offers no inline completion" in off
    editor.command("bwipeout!")
    write_user_config(completion_config(fake_llm))
    on = report()
    assert re.search(r"OK.*ghost text on: the plugin draws it", on), on
    assert re.search(r"OK.*next edits on: .*<Tab>", on), on
