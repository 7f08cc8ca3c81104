"""The plugin's method names, update variants, commands and message shapes, checked against
the server's protocol module (``lsp_agent.lsp.protocol``) and ``docs/protocol.schema.json``,
so the two cannot drift apart."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.core.modes import CLIENT_MODES
from lsp_agent.lsp import protocol as p
from lsp_agent.lsp.schema import SESSION_UPDATES, protocol_schema

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "nvim-plugin"
LUA_FILES = sorted(PLUGIN.rglob("*.lua"))
TAP = Path(__file__).parents[1] / "support" / "lsp_tap.py"
SCHEMA = protocol_schema()
SCHEMA_FILE = json.loads((ROOT / "docs" / "protocol.schema.json").read_text())


# -- a strict check of a JSON value against the protocol schema ------------------------------


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def violations(schema: dict[str, Any], value: Any, path: str = "$") -> list[str]:
    """What in `value` the schema does not allow, unknown object keys included (the server
    ignores unknown keys, so a misspelt optional field would otherwise go unnoticed)."""
    schema = _resolve(schema)
    for union in ("anyOf", "oneOf"):
        if union in schema:
            branches = [violations(branch, value, path) for branch in schema[union]]
            return [] if any(not b for b in branches) else min(branches, key=len)
    if "const" in schema and value != schema["const"]:
        return [f"{path}: {value!r} is not {schema['const']!r}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{path}: {value!r} is not one of {schema['enum']}"]
    kind = schema.get("type")
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }
    if kind in checks and not checks[kind](value):
        return [f"{path}: expected {kind}, got {type(value).__name__} {value!r}"]
    found: list[str] = []
    if isinstance(value, dict) and ("properties" in schema or kind == "object"):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key in schema.get("required", []):
            if key not in value:
                found.append(f"{path}: {key} is required")
        for key, item in value.items():
            if key in properties:
                found += violations(properties[key], item, f"{path}.{key}")
            elif isinstance(extra, dict):
                found += violations(extra, item, f"{path}.{key}")
            elif extra is not True:
                found.append(f"{path}: unknown key {key!r}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            found += violations(schema["items"], item, f"{path}[{i}]")
    return found


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


# -- names ---------------------------------------------------------------------------------


def lua_strings(pattern: str) -> dict[str, set[str]]:
    """Every match of `pattern` inside a Lua string literal, with the files it is in."""
    found: dict[str, set[str]] = {}
    for path in LUA_FILES:
        for match in re.finditer(r"[\"']([^\"'\n]*)[\"']", path.read_text()):
            literal = match.group(1)
            if re.fullmatch(pattern, literal):
                found.setdefault(literal, set()).add(path.relative_to(PLUGIN).as_posix())
    return found


def test_every_agent_method_in_the_lua_code_is_a_server_method_named_in_one_place() -> None:
    methods = lua_strings(r"agent/[A-Za-z/]+")
    assert methods, "no agent/... method found in the Lua code"
    unknown = sorted(set(methods) - set(p.METHODS))
    assert not unknown, f"methods the server does not have: {unknown}"
    assert set(methods) <= set(SCHEMA_FILE["methods"])
    elsewhere = {
        m: files for m, files in methods.items() if files != {"lua/lsp_agent/protocol.lua"}
    }
    assert not elsewhere, f"method names outside lua/lsp_agent/protocol.lua: {elsewhere}"


def test_every_command_in_the_lua_code_is_a_server_command() -> None:
    commands = lua_strings(r"lspAgent\.[A-Za-z]+")
    assert set(commands) == set(p.COMMAND_TYPES), "the plugin should know every command"
    assert set(commands) == set(SCHEMA_FILE["commands"])


def test_protocol_tables_match_directions_and_kinds(editor: Any) -> None:
    tables = editor.lua("return require('lsp_agent.protocol')")
    expected = {
        "requests": ("client_to_server", "request"),
        "notifications": ("client_to_server", "notification"),
        "server_notifications": ("server_to_client", "notification"),
        "server_requests": ("server_to_client", "request"),
    }
    for table, (direction, kind) in expected.items():
        for name in tables[table].values():
            method = p.METHODS[name]
            assert (method.direction, method.kind) == (direction, kind), name
    # every server -> client method has a handler in the client config
    handled = set(
        editor.lua("return vim.tbl_keys(require('lsp_agent.client').lsp_config().handlers)")
    )
    to_client = {name for name, m in p.METHODS.items() if m.direction == "server_to_client"}
    assert to_client <= handled
    assert set(tables["commands"].values()) == set(p.COMMAND_TYPES)
    kinds = set(tables["option_kinds"])
    assert kinds == set(SCHEMA["$defs"]["PermissionOptionModel"]["properties"]["kind"]["enum"])


def test_the_modes_are_the_servers_named_once_in_the_lua_code(editor: Any, workspace: Path) -> None:
    """Issue 34: one table of modes. The plugin checks `setup({mode})` against
    protocol.lua's copy of the server's table (checked here) and no other Lua file lists
    them; `:LspAgent mode` completes from the server's options before any session."""
    assert editor.lua("return require('lsp_agent.protocol').modes") == list(CLIENT_MODES)
    for path in LUA_FILES:
        if path.name != "protocol.lua":
            assert not re.search(r"[\"']build[\"'],\s*[\"']plan[\"']", path.read_text()), path
    (workspace / "a.py").write_text("x = 1\n")
    editor.edit(workspace / "a.py")
    assert editor.lua("return require('lsp_agent.session').current") is None
    complete = "return vim.fn.getcompletion(..., 'cmdline')"
    assert editor.lua(complete, "LspAgent mode ") == list(CLIENT_MODES)


def test_the_chat_handles_exactly_the_session_update_variants(editor: Any) -> None:
    handled = editor.lua("return require('lsp_agent.session').handled_updates()")
    assert sorted(handled) == sorted(SESSION_UPDATES)
    assert sorted(handled) == sorted(SCHEMA_FILE["sessionUpdates"])


def test_initialization_options_and_capabilities(editor: Any, workspace: Path) -> None:
    editor.setup(model="anthropic/claude-test", mode="plan", server_config={"max_steps": 7})
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor.edit(path)
    client = editor.lua(
        """
        local c = vim.lsp.get_clients({ name = 'lsp_agent' })[1]
        return { init = c.config.init_options, caps = c.capabilities }
        """
    )
    agent = client["init"]["agent"]
    assert violations(ref("AgentClientOptions"), agent) == []
    p.AgentClientOptions.model_validate(agent)
    assert agent["forwardsDiagnostics"] is True
    assert all(agent["ui"].values())
    assert agent["config"] == {"model": "anthropic/claude-test", "mode": "plan", "max_steps": 7}
    edit = client["caps"]["workspace"]["workspaceEdit"]
    assert edit["documentChanges"] is True
    assert client["caps"]["workspace"]["applyEdit"] is True


# -- shapes on the wire --------------------------------------------------------------------


def test_every_message_the_plugin_sends_matches_the_protocol(
    editor: Any, workspace: Path, tmp_path: Path
) -> None:
    """Drive most of the plugin through a tap and check every agent message it sent (and every
    answer it gave to the server's requests) against the schema, unknown keys included."""
    log = tmp_path / "wire.jsonl"
    editor.setup(
        cmd=[sys.executable, str(TAP), str(log), "--", sys.executable, "-m", "lsp_agent", "serve"]
    )
    path = workspace / "a.py"
    path.write_text("value = 1\nprint(valu)\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    question = {
        "question": "Which one?",
        "options": [{"label": "this"}, {"label": "that"}],
        "multiple": False,
    }
    editor.fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "edit", "input": edit}]},
                {"tool_calls": [{"name": "question", "input": {"questions": [question]}}]},
                {"text": "All done."},
                {"text": "Fixed."},
            ]
        }
    )
    editor.edit(path)
    editor.lua(
        """
        local ns = vim.api.nvim_create_namespace('test_linter')
        vim.diagnostic.set(ns, 0, {{ lnum = 1, col = 6, end_col = 10, message = 'undefined valu',
          severity = 1, source = 'testlint', code = 'E1' }})
        """
    )
    editor.command("LspAgent chat change the value")
    asked = editor.wait_select(1)
    editor.choose(asked, "View diff")
    editor.wait_lua("vim.t.lsp_agent_diff ~= nil", "the diff tab")
    editor.type(":LspAgent permission<CR>")  # answered from the diff tab
    editor.choose(editor.wait_select(2), "Allow once")
    editor.choose(editor.wait_select(3), "that")
    editor.wait_chat("All done.")
    editor.wait_idle()
    editor.command("LspAgent mode build")
    editor.command("LspAgent stop")
    editor.focus_buffer(path)
    editor.set_cursor(2, 7)
    editor.command("LspAgent fix")
    editor.wait_chat("Fixed.")
    editor.wait_idle()
    editor.command("LspAgent undo")
    editor.wait(lambda: "undone" in editor.chat_text(), "the undo")
    editor.command("LspAgent redo")
    editor.command("LspAgent resume")
    editor.wait_lua(
        "require('lsp_agent.log').contains('replay full')", "the resume to load the session"
    )
    editor.wait_lua(
        "not require('lsp_agent.session').sessions[require('lsp_agent.session').current].loading",
        "the load",
    )

    records = [json.loads(line) for line in log.read_text().splitlines()]
    sent = [r["message"] for r in records if r["direction"] == "client"]
    received = [r["message"] for r in records if r["direction"] == "server"]
    asked_by_server = {m["id"]: m["method"] for m in received if "method" in m and "id" in m}
    problems: list[str] = []
    seen: set[str] = set()
    for message in sent:
        method = message.get("method")
        if method in p.METHODS:
            seen.add(method)
            spec = SCHEMA["methods"][method]
            problems += [
                f"{method}: {v}" for v in violations(spec["params"], message.get("params"))
            ]
            p.METHODS[method].params.model_validate(message.get("params"))
        elif method == "workspace/executeCommand":
            command = message["params"]["command"]
            seen.add(command)
            [argument] = message["params"]["arguments"]
            spec = SCHEMA["commands"][command]
            problems += [f"{command}: {v}" for v in violations(spec["argument"], argument)]
        elif method is None and message.get("id") in asked_by_server:
            answered = asked_by_server[message["id"]]
            if answered in p.METHODS:
                seen.add(answered + " (answer)")
                result = SCHEMA["methods"][answered]["result"]
                problems += [f"{answered}: {v}" for v in violations(result, message.get("result"))]
    assert problems == []
    assert seen >= {
        "agent/session/new",
        "agent/session/prompt",
        "agent/session/load",
        "agent/session/list",
        "agent/session/setConfigOption",
        "agent/session/cancel",
        "agent/diagnostics",
        "agent/diff/get",
        "agent/session/requestPermission (answer)",
        "agent/session/askQuestion (answer)",
        "lspAgent.fix",
        "lspAgent.undo",
        "lspAgent.redo",
    }, seen


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"protocolVersion": 1, "ui": {"chat": True}}, []),
        (
            {"protocolVersion": 1, "forwardDiagnostics": True},
            ["$: unknown key 'forwardDiagnostics'"],
        ),
        ({"ui": {}}, ["$: protocolVersion is required"]),
    ],
)
def test_the_strict_check_itself(value: dict[str, Any], expected: list[str]) -> None:
    assert violations(ref("AgentClientOptions"), value) == expected
