"""The permission gate end to end: `lsp-agent run` with the tools that change files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli as cli
from lsp_agent.testing.fake_llm import running_fake_llm

KEY = "sk-permission-test"
ORIGINAL = "value = 1\n"


@pytest.fixture
def workspace(workspace: Path, tmp_path: Path) -> Path:
    (workspace / "a.py").write_text(ORIGINAL)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.py").write_text(ORIGINAL)
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    return workspace


def run_one_call(
    workspace: Path, tool: str, args: dict[str, Any], *flags: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    script = [{"tool_calls": [{"name": tool, "input": args}]}, {"text": "finished"}]
    with running_fake_llm(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        result = cli(
            "run", *flags, "--model", "anthropic/claude-test", "change it", cwd=workspace, env=env
        )
        bodies = [r.body for r in server.requests if r.turn != "side"]
    return result, bodies


def tool_result(bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """The tool_result block the model got back for the single call."""
    for message in bodies[1]["messages"]:
        if isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    return dict(block)
    raise AssertionError("no tool result in the second request")


EDITS = {
    "write": lambda path: {"file_path": path, "content": "value = 2\n"},
    "edit": lambda path: {"file_path": path, "old_string": "value = 1", "new_string": "value = 2"},
    "apply_patch": lambda path: {
        "patch": (
            f"*** Begin Patch\n*** Update File: {path}\n@@\n-value = 1\n+value = 2\n*** End Patch"
        )
    },
}


@pytest.mark.parametrize("tool", sorted(EDITS))
@pytest.mark.parametrize("target", ["linked/b.py", "../outside/b.py", "ABSOLUTE"])
def test_edits_outside_ask_external_directory_and_yes_never_approves(
    workspace: Path, tool: str, target: str
) -> None:
    outside_file = workspace.parent / "outside" / "b.py"
    path = str(outside_file) if target == "ABSOLUTE" else target
    result, bodies = run_one_call(workspace, tool, EDITS[tool](path), "--yes", "--json")
    assert result.returncode == 4, result.stderr  # 4: an ask was refused
    assert outside_file.read_text() == ORIGINAL
    block = tool_result(bodies)
    assert block["is_error"] is True
    updates = [json.loads(line)["update"] for line in result.stdout.splitlines()]
    asked = [u for u in updates if u["sessionUpdate"] == "permission_update"]
    assert asked[0]["permission"] == "external_directory"
    assert asked[-1]["state"] == "rejected"


@pytest.mark.parametrize("tool", sorted(EDITS))
def test_yes_approves_an_edit_inside_the_workspace(workspace: Path, tool: str) -> None:
    result, bodies = run_one_call(workspace, tool, EDITS[tool]("a.py"), "--yes")
    assert result.returncode == 0, result.stderr
    assert (workspace / "a.py").read_text() == "value = 2\n"
    assert tool_result(bodies).get("is_error") is not True


@pytest.mark.parametrize("tool", sorted(EDITS))
def test_yes_does_not_override_a_configured_deny(workspace: Path, tool: str) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"permission": {"edit": {"*.py": "deny"}}}))
    result, bodies = run_one_call(workspace, tool, EDITS[tool]("a.py"), "--yes")
    assert result.returncode == 0, result.stderr
    assert (workspace / "a.py").read_text() == ORIGINAL
    block = tool_result(bodies)
    assert block["is_error"] is True
    assert "prevents you from using this specific tool call" in json.dumps(block)


@pytest.mark.parametrize("tool", sorted(EDITS))
def test_plan_mode_with_yes_changes_nothing(workspace: Path, tool: str) -> None:
    result, bodies = run_one_call(workspace, tool, EDITS[tool]("a.py"), "--mode", "plan", "--yes")
    assert result.returncode == 0, result.stderr
    assert (workspace / "a.py").read_text() == ORIGINAL
    offered = {t["name"] for t in bodies[0]["tools"]}
    assert offered.isdisjoint(EDITS)
    assert "not available in plan mode" in json.dumps(tool_result(bodies))


def test_without_a_terminal_an_edit_is_refused_with_a_reason_and_the_turn_goes_on(
    workspace: Path,
) -> None:
    result, bodies = run_one_call(workspace, "edit", EDITS["edit"]("a.py"))
    assert result.returncode == 4, result.stderr  # 4: an ask was refused
    assert (workspace / "a.py").read_text() == ORIGINAL
    assert "no terminal (use --yes or a permission rule)" in json.dumps(tool_result(bodies))
    assert "finished" in result.stdout
