"""setup() validation, the command and its completion, the LSP config without setup(), the
help file, and :checkhealth lsp_agent."""

from __future__ import annotations

import contextlib
import re
import shutil
from pathlib import Path
from typing import Any

import pynvim
import pytest

PLUGIN = Path(__file__).resolve().parents[2] / "nvim-plugin"
KEY = "sk-lsp-nvim-test-key"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"bogus": 1}, "opts.bogus: unknown option"),
        ({"mode": "fast"}, "mode: expected one of build, plan"),
        ({"model": "claude"}, "model: expected provider/model"),
        ({"cmd": []}, "cmd: must not be empty"),
        ({"cmd": ["lsp-agent", 3]}, "cmd[2]: expected a string"),
        ({"window": {"layout": "diagonal"}}, "window.layout: expected one of"),
        ({"window": {"size": -1}}, "window.size: expected a positive number"),
        ({"keymaps": {"chat": {"close": 1}}}, "keymaps.chat.close: expected a key"),
        ({"keymaps": {"chat": {"bogus": "x"}}}, "keymaps.chat.bogus: unknown key"),
        ({"keymaps": {"global": {"dance": "<leader>d"}}}, "keymaps.global.dance: unknown action"),
        ({"forward_diagnostics": "yes"}, "forward_diagnostics: expected a boolean"),
        ({"completion": {"debounce": -1}}, "completion.debounce: expected a number"),
        ({"completion": {"builtin": "yes"}}, "completion.builtin: expected a boolean"),
        ({"next_edit": {"when": 1}}, "next_edit.when: unknown option"),
        ({"next_edit": {"sign": "→→→"}}, "next_edit.sign: expected one or two cells"),
        ({"keymaps": {"next_edit": {"jump": "n"}}}, "keymaps.next_edit.jump: unknown key"),
        (
            {"server_config": {"permission": {"bash": {"*": "ask", "curl *": "deny"}}}},
            "server_config.permission.bash: a Lua table has no order",
        ),
    ],
)
def test_setup_rejects_bad_options_naming_them(
    nvim: pynvim.Nvim, options: dict[str, Any], message: str
) -> None:
    ok, error = nvim.exec_lua("return {pcall(require('lsp_agent').setup, ...)}", options)
    assert ok is False
    assert error.startswith("lsp_agent.setup: ")
    assert message in error


def test_setup_accepts_every_documented_option(nvim: pynvim.Nvim) -> None:
    options = {
        "cmd": ["lsp-agent", "serve"],
        "cmd_env": {"LSP_AGENT_LOG": "DEBUG"},
        "model": "anthropic/claude-sonnet-4-5",
        "mode": "plan",
        "server_config": {
            "max_steps": 3,
            "permission": {"bash": [{"*": "ask"}, {"curl *": "deny"}], "edit": {"*": "ask"}},
        },
        "root_markers": [".git"],
        "autostart": False,
        "forward_diagnostics": False,
        "diagnostics_debounce": 100,
        "keymaps": {
            "global": {"chat": "<leader>ac", "fix": False},
            "chat": {"close": "Q"},
            "prompt": {"submit_insert": "<C-j>"},
            "completion": {"accept": "<C-l>", "dismiss": False},
            "next_edit": {"accept": "<leader>n"},
        },
        "window": {
            "layout": "float",
            "position": "left",
            "size": 60,
            "prompt_height": 3,
            "float": {"width": 0.5, "height": 0.5, "border": "single"},
        },
        "diff_close_on_answer": False,
        "completion": {"enabled": False, "debounce": 100, "builtin": False},
        "next_edit": {"enabled": True, "debounce": 800, "sign": ">"},
    }
    merged = nvim.exec_lua("return require('lsp_agent').setup(...)", options)
    assert merged["keymaps"]["chat"]["stop"] == "<C-c>"  # defaults kept beside the given keys
    assert merged["root_markers"] == [".git"]  # lists replace the default
    assert nvim.exec_lua("return vim.fn.maparg('<leader>ac', 'n') ~= ''")
    help_text = (PLUGIN / "doc" / "lsp_agent.txt").read_text()
    for option in options:
        assert f"*lsp_agent-option-{option}*" in help_text, option


def test_the_command_completes_its_subcommands_and_values(editor: Any) -> None:
    complete = "return vim.fn.getcompletion(..., 'cmdline')"
    names = editor.lua(complete, "LspAgent ")
    assert names == sorted(
        [
            "chat",
            "ask",
            "until",
            "fix",
            "explain",
            "stop",
            "retry",
            "undo",
            "redo",
            "sessions",
            "resume",
            "model",
            "mode",
            "diff",
            "permission",
            "permissions",
            "log",
            "allow",
            "review",
            "codereview",
            "keep",
            "undo-hunk",
            "undo-reason",
            "comment",
            "send-comments",
            "commit",
            "rewind",
            "compact",
        ]
    )
    assert editor.lua(complete, "LspAgent re") == ["redo", "resume", "retry", "review", "rewind"]
    assert editor.lua(complete, "LspAgent mode ") == ["build", "plan"]
    help_text = (PLUGIN / "doc" / "lsp_agent.txt").read_text()
    for name in names:
        assert f"*:LspAgent-{name}*" in help_text, name


def test_the_lsp_config_works_without_setup_and_the_plugin_file_defines_the_command(
    nvim: pynvim.Nvim,
) -> None:
    nvim.command("runtime plugin/lsp_agent.lua")
    assert nvim.exec_lua("return vim.fn.exists(':LspAgent')") == 2
    config = nvim.exec_lua(
        """
        local c = vim.lsp.config.lsp_agent
        return { cmd = c.cmd, caps = c.capabilities, agent = c.init_options.agent,
                 handlers = vim.tbl_keys(c.handlers) }
        """
    )
    assert config["cmd"] == ["lsp-agent", "serve"]
    assert config["caps"]["workspace"]["workspaceEdit"]["documentChanges"] is True
    assert config["agent"]["protocolVersion"] == 1
    assert "agent/session/requestPermission" in config["handlers"]


def test_help_tags_resolve(nvim: pynvim.Nvim, tmp_path: Path) -> None:
    copy = tmp_path / "plugin"
    shutil.copytree(PLUGIN / "doc", copy / "doc")
    nvim.command(f"set rtp+={copy}")
    nvim.command(f"helptags {copy / 'doc'}")
    for tag in ("lsp_agent", ":LspAgent", "lsp_agent.setup()", "lsp_agent-permissions"):
        nvim.command(f"help {tag}")
        assert nvim.exec_lua("return vim.fn.expand('%:t')") == "lsp_agent.txt"
    text = (PLUGIN / "doc" / "lsp_agent.txt").read_text()
    defined = set(re.findall(r"\*([^*\s]+)\*", text))
    builtin = {"vim.ui.select()", "vim.ui.input()", "vim.lsp.config()", "vim.lsp.enable()"}
    for link in set(re.findall(r"\|([^|\s]+)\|", text)):
        if link.startswith(("lsp_agent", ":LspAgent")):
            assert link in defined, f"|{link}| has no *{link}* tag"
        elif link not in builtin:
            nvim.command(f"help {link}")  # a Neovim tag: raises if it does not exist
    api = re.findall(r"^function M\.(\w+)\(", (PLUGIN / "lua/lsp_agent/init.lua").read_text(), re.M)
    for name in api:
        assert f"*lsp_agent.{name}()*" in text, f"lsp_agent.{name}() is not documented"


def health_report(nvim: pynvim.Nvim) -> str:
    nvim.command("checkhealth lsp_agent")
    return "\n".join(nvim.exec_lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))


def test_checkhealth_is_ok_with_the_server_installed(editor: Any) -> None:
    report = health_report(editor.nvim)
    assert "ERROR" not in report, report
    assert re.search(r"OK.*Neovim 0\.11", report), report
    assert re.search(r"OK.*server command: .*lsp_agent serve", report), report
    assert re.search(r"OK.*the server starts: lsp-agent", report), report
    assert re.search(r"OK.*model: anthropic/claude-test", report), report
    assert re.search(r"OK.*provider key: ANTHROPIC_API_KEY is set", report), report
    assert KEY not in report


def test_checkhealth_errors_clearly_without_the_server(nvim: pynvim.Nvim) -> None:
    nvim.exec_lua("require('lsp_agent').setup({ cmd = { '/nowhere/lsp-agent', 'serve' } })")
    report = health_report(nvim)
    assert re.search(r"ERROR.*server command not found: /nowhere/lsp-agent", report), report
    assert "pipx install ." in report  # a way that works: no registry has lsp-agent


def test_checkhealth_errors_when_the_server_does_not_start(nvim: pynvim.Nvim) -> None:
    nvim.exec_lua("require('lsp_agent').setup({ cmd = { 'sh', '-c', 'echo broken >&2; exit 3' } })")
    report = health_report(nvim)
    assert re.search(r"ERROR.*the server does not start: it exited", report), report
    assert "broken" in report


def test_checkhealth_errors_when_the_key_is_missing(editor: Any) -> None:
    editor.lua("vim.env.ANTHROPIC_API_KEY = nil")  # the server inherits Neovim's environment
    report = health_report(editor.nvim)
    assert re.search(r"ERROR.*provider key: ANTHROPIC_API_KEY is not set", report), report


def test_every_module_loads_without_leaking_globals(nvim: pynvim.Nvim) -> None:
    modules = sorted(
        "lsp_agent" if p.stem == "init" else f"lsp_agent.{p.stem}"
        for p in (PLUGIN / "lua" / "lsp_agent").glob("*.lua")
    )
    leaked = nvim.exec_lua(
        """
        local before = {}
        for k in pairs(_G) do before[k] = true end
        for _, name in ipairs(...) do require(name) end
        local leaked = {}
        for k in pairs(_G) do if not before[k] then table.insert(leaked, k) end end
        return leaked
        """,
        modules,
    )
    assert leaked == []
    assert len(modules) >= 15


def test_help_works_after_the_documented_manual_install(
    nvim_binary: Path, tmp_path: Path, server_env: None
) -> None:
    """docs/neovim.md's "by hand" install: the plugin copied anywhere, added to
    'runtimepath', setup() — and `:help lsp_agent` works without a `:helptags` of one's own."""
    copy = tmp_path / "lsp-agent" / "nvim-plugin"
    shutil.copytree(PLUGIN, copy, ignore=shutil.ignore_patterns("tags"))
    assert not (copy / "doc" / "tags").exists()
    argv = [str(nvim_binary), "-u", "NONE", "-i", "NONE", "-n", "--headless", "--embed"]
    nv = pynvim.attach("child", argv=argv)
    try:
        nv.exec_lua("vim.opt.runtimepath:append(...)", str(copy))
        nv.exec_lua("require('lsp_agent').setup({ autostart = false })")
        nv.command("help lsp_agent")
        assert nv.exec_lua("return vim.fn.expand('%:p')") == str(copy / "doc" / "lsp_agent.txt")
        nv.command("help :LspAgent-permission")
        assert (copy / "doc" / "tags").exists()
    finally:
        with contextlib.suppress(Exception):  # Neovim exits before it answers
            nv.command("qall!")
        nv.close()
