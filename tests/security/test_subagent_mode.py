"""Finding 3: a subagent inherits its parent's mode and is never looser.

A ``task`` started in plan mode runs read-only and asks as in plan mode (``--yes`` approves
none of it); a mode's limits are never loosened by a configured rule or a saved approval,
and limits combine by the strictest.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.core.messages import ToolCallPart, ToolSpec
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.modes import mode_rules, subagent_scope
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.permission.rules import Rule, decide, hidden
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.session.service import SessionService
from lsp_agent.core.stream_events import Finished, StreamEvent, TextDelta, ToolCallEnded
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.fake_llm import running_fake_llm
from lsp_agent.testing.provider import ScriptedProvider
from lsp_agent.testing.tools import tool_spec

KEY = "sk-ant-subagent-mode-test"
ALLOW_BASH = Rule(permission="bash", pattern="*", action="allow", source="config")


def effective(agent: str, parent_mode: str, configured: list[Rule]) -> list[Rule]:
    parent = [*configured, *mode_rules(parent_mode)]
    scope = subagent_scope(agent, parent_mode, parent)
    return [*configured, *scope.limits, *mode_rules(scope.mode)]


@pytest.mark.parametrize("agent", ["general", "explore"])
def test_a_subagent_of_a_plan_parent_is_read_only(agent: str) -> None:
    rules = effective(
        agent, "plan", [ALLOW_BASH, Rule(permission="edit", pattern="*", action="allow")]
    )
    assert subagent_scope(agent, "plan", mode_rules("plan")).mode == "plan"
    for permission in ("edit", "bash", "webfetch", "task", "todowrite"):
        assert decide(permission, ["x"], rules).action == "deny", permission
        assert hidden(permission, rules), permission
    read = Rule(permission="read", pattern="*", action="allow")
    assert decide("read", ["a.py"], [read, *rules]).action == "allow"


def test_a_general_subagent_of_a_build_parent_keeps_its_parents_rules() -> None:
    rules = effective("general", "build", [ALLOW_BASH])
    assert subagent_scope("general", "build", rules).mode == "general"
    assert decide("bash", ["ls"], rules).action == "allow"
    assert decide("task", ["general"], rules).action == "deny"


def test_limits_combine_by_the_strictest_whatever_their_order() -> None:
    plan_then_explore = [*mode_rules("plan"), *mode_rules("explore")]
    explore_then_plan = [*mode_rules("explore"), *mode_rules("plan")]
    for rules in (plan_then_explore, explore_then_plan):
        assert decide("bash", ["ls"], [ALLOW_BASH, *rules]).action == "deny"


def test_plan_mode_never_loosens_a_configured_deny() -> None:
    configured = [ALLOW_BASH, Rule(permission="bash", pattern="rm *", action="deny")]
    assert decide("bash", ["rm x"], [*configured, *mode_rules("plan")]).action == "deny"


def test_a_saved_approval_never_loosens_a_mode_limit() -> None:
    saved = [Rule(permission="bash", pattern="*", action="allow", source="session")]
    assert decide("bash", ["ls"], list(mode_rules("plan")), saved).action == "ask"
    saved_edit = [Rule(permission="edit", pattern="*", action="allow", source="always")]
    assert decide("edit", ["a.py"], list(mode_rules("plan")), saved_edit).action == "deny"


# --- a real session: plan-mode parent, general child ---------------------------------


class Tools:
    """``task`` starts a subagent; ``write`` and ``bash`` record that they ran."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def specs(self) -> tuple[ToolSpec, ...]:
        return (
            tool_spec("read", kind="read"),
            tool_spec("write", kind="edit", mutates=True, permission=PermissionKind.EDIT),
            tool_spec("bash", kind="execute", mutates=True),
            tool_spec("task", mutates=True),
        )

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        self.runs.append(call.name)
        if call.name == "task":
            result = await ctx.events.run_subtask("do it", "write a file", "general")
            return ToolOutcome(output=f"{result.session_id}: {result.text}")
        return ToolOutcome(output="ok")


def call(name: str, call_id: str) -> list[StreamEvent]:
    return [ToolCallEnded(tool_call_id=call_id, name=name, input={}), Finished(reason="tool_use")]


def text(answer: str) -> list[StreamEvent]:
    return [TextDelta(text=answer), Finished(reason="end_turn")]


async def test_a_plan_mode_parent_gives_its_subagent_no_edits_and_no_commands(
    store: SqliteEventStore, tmp_path: Path
) -> None:
    steps = [
        call("task", "t1"),
        call("write", "w1"),
        call("bash", "b1"),
        call("read", "r1"),
        text("child done"),
        text("parent done"),
    ]
    tools, editor = Tools(), RecordingEditor()
    svc = SessionService(
        store=store,
        provider=ScriptedProvider(steps),
        tools=tools,
        editor=editor,
        clock=FakeClock(),
        ids=SequentialIds(),
        options=AgentOptions(
            model=ModelInfo(provider="scripted", model="m"),
            titles=False,
            rules=(ALLOW_BASH, Rule(permission="edit", pattern="*", action="allow")),
        ),
    )
    parent = await svc.create(workspace_folder=str(tmp_path), mode="plan")
    await svc.admit(parent, [{"type": "text", "text": "go"}])

    outcome = await svc.run_turn(parent)

    assert outcome.stop_reason == "end_turn"
    assert tools.runs == ["task", "read"]  # write and bash were refused in the child


# --- end to end: `lsp-agent run --mode plan --yes` -------------------------------------


def run(
    ws: Path, script: list[dict[str, Any]], *flags: str
) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    with running_fake_llm(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        result = run_cli(
            "run", *flags, "--model", "anthropic/claude-test", "--json", "go", cwd=ws, env=env
        )
        bodies = [r.body for r in server.requests if r.turn != "side"]
    return result, bodies


def child_script(*child_calls: dict[str, Any]) -> list[dict[str, Any]]:
    task = {"description": "make the change", "prompt": "write and run", "subagent_type": "general"}
    return [
        {"tool_calls": [{"name": "task", "input": task}]},
        *({"tool_calls": [c]} for c in child_calls),
        {"text": "child finished"},
        {"text": "parent finished"},
    ]


def write_config(config: dict[str, Any]) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))


def test_plan_mode_with_yes_a_general_subagent_writes_and_runs_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_config({"sandbox": "off"})
    script = child_script(
        {"name": "write", "input": {"file_path": "pwned.txt", "content": "x\n"}},
        {"name": "bash", "input": {"command": "touch ran-bash"}},
        {"name": "edit", "input": {"file_path": "pwned.txt", "old_string": "x", "new_string": "y"}},
    )

    result, bodies = run(ws, script, "--mode", "plan", "--yes")

    assert result.returncode in (0, 4), result.stderr
    assert sorted(p.name for p in ws.iterdir()) == []
    child_requests = [b for b in bodies if "write and run" in json.dumps(b["messages"][:1])]
    assert child_requests, "the subagent ran"
    offered = {t["name"] for t in child_requests[0]["tools"]}
    assert offered.isdisjoint({"write", "edit", "apply_patch", "bash", "task", "webfetch"})


def test_plan_mode_subagent_stays_read_only_even_when_the_config_allows_everything(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_config({"permission": {"*": "allow"}, "sandbox": "off"})
    script = child_script(
        {"name": "bash", "input": {"command": "touch ran-bash"}},
        {"name": "write", "input": {"file_path": "pwned.txt", "content": "x\n"}},
    )

    result, _ = run(ws, script, "--mode", "plan", "--yes")

    assert result.returncode in (0, 4), result.stderr
    assert not (ws / "ran-bash").exists()
    assert not (ws / "pwned.txt").exists()


def test_build_mode_with_yes_a_general_subagent_may_still_work(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_config({"sandbox": "off"})
    script = child_script({"name": "write", "input": {"file_path": "made.txt", "content": "x\n"}})

    result, _ = run(ws, script, "--yes")

    assert result.returncode == 0, result.stderr
    assert (ws / "made.txt").read_text() == "x\n"
