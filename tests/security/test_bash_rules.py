"""Finding 2: bash permission rules match the parsed command words, never the raw text.

With ``rm *`` denied, every spelling and wrapper of ``rm`` (and its known equivalents) is
denied; a command whose name only the shell knows, or a line that does not parse, is asked
and can be allowed by no rule, no saved approval and no ``--yes``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.core.permission.rules import Decision, Rule, decide
from lsp_agent.shell.plan import PermissionPlan, plan_permissions
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm
from lsp_agent.workspace.boundary import WorkspaceBoundary

KEY = "sk-ant-bash-rules-test"


def plan(ws: Path, command: str) -> PermissionPlan:
    return plan_permissions(
        command, workdir=str(ws), boundary=WorkspaceBoundary([ws]), home=None, env={}
    )


def decision(
    ws: Path, command: str, configured: list[Rule], saved: Sequence[Rule] = ()
) -> Decision:
    result = plan(ws, command)
    return decide("bash", result.patterns, configured, list(saved), unjudged=result.unjudged)


ALLOW_ALL_BUT_RM = [
    Rule(permission="bash", pattern="*", action="allow"),
    Rule(permission="bash", pattern="rm *", action="deny"),
]

RM_SPELLINGS = [
    "\\rm x",
    "r''m x",
    '"rm" x',
    "'rm' x",
    "r\\m x",
    "command rm x",
    "command -p rm x",
    "builtin rm x",
    "exec rm x",
    "/bin/rm x",
    "/usr/bin/rm x",
    "./../../bin/rm x",
    "env rm x",
    "env -i rm x",
    "env -u HOME rm x",
    "env FOO=1 rm x",
    "env -C . rm x",
    "nice rm x",
    "nice -n 5 rm x",
    "nice -5 rm x",
    "nohup rm x",
    "time rm x",
    "time -p rm x",
    "timeout 5 rm x",
    "timeout -s KILL 5 rm x",
    "stdbuf -o0 rm x",
    "ionice -c3 rm x",
    "setsid rm x",
    "sudo rm x",
    "sudo -u root rm x",
    "doas rm x",
    "busybox rm x",
    "FOO=1 rm x",
    "FOO=1 BAR=2 rm x",
    "nice nohup timeout 9 env A=1 command rm x",
    "ls | xargs rm",
    "ls | xargs -0 -n1 rm -f",
    "find . -name '*.o' -delete",
    "find . -exec rm {} \\;",
    "find . -execdir rm -f {} +",
    "find . -ok rm {} ';'",
    "unlink x",
    "bash -c 'rm x'",
    'sh -c "rm x"',
    "bash -lc 'cd . && rm x'",
    "eval rm x",
    "eval 'rm x'",
    "watch -n1 rm x",
    "env -S 'rm x'",
    "true && rm x",
    "(rm x)",
    "echo $(rm x)",
    "if true; then rm x; fi",
]


@pytest.mark.parametrize("command", RM_SPELLINGS)
def test_every_spelling_and_wrapper_of_a_denied_command_is_denied(
    tmp_path: Path, command: str
) -> None:
    assert decision(tmp_path, command, ALLOW_ALL_BUT_RM).action == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "$(echo rm) x",
        "`echo rm` x",
        "$CMD x",
        '"$CMD" x',
        "${CMD} x",
        "x=rm; $x y",
        "/bin/r? x",
        "/bin/r* x",
        "rm$IFS x",
        "$'rm' x",
        "sudo $(echo rm) x",
        "xargs $CMD",
        'bash -c "$CODE"',
        'eval "$CODE"',
        "alias x=rm",
        "hash -p /bin/rm ls",
    ],
)
def test_a_command_name_only_the_shell_knows_is_asked_never_allowed(
    tmp_path: Path, command: str
) -> None:
    result = plan(tmp_path, command)
    assert result.unjudged
    everything = [Rule(permission="bash", pattern="*", action="allow")]
    saved = [Rule(permission="bash", pattern="*", action="allow", source="session")]
    assert (
        decide("bash", result.patterns, everything, saved, unjudged=result.unjudged).action == "ask"
    )
    assert decide("bash", result.patterns, ALLOW_ALL_BUT_RM, unjudged=result.unjudged).action in (
        "ask",
        "deny",
    )
    assert not set(result.unjudged) & set(result.always)  # nothing to remember


@pytest.mark.parametrize(
    "command",
    [
        "git -c a=b push",
        "git --no-pager push",
        "git  push",
        "git\tpush",
        "git -C . push",
        "git --git-dir=.git push origin main",
        "git --work-tree . push",
        "git -P -c user.name=x push --force",
        "/usr/bin/git push",
        "\\git push",
        "GIT_TRACE=1 git push",
        "env GIT_SSH_COMMAND=ssh git push",
        "git 'push'",
    ],
)
def test_git_global_options_do_not_hide_the_subcommand(tmp_path: Path, command: str) -> None:
    denied = [
        Rule(permission="bash", pattern="*", action="allow"),
        Rule(permission="bash", pattern="git push *", action="deny"),
    ]
    assert decision(tmp_path, command, denied).action == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "sudo ls",
        "/tmp/nice ls",
        "./env ls",
        "/tmp/ls -la",
        "./ls",
        "FOO=1 ls",
        "LD_PRELOAD=/tmp/x.so ls",
        "ls | xargs rm",
        "git -c core.pager=evil log",
        "find . -exec rm {} \\;",
    ],
)
def test_a_narrower_allow_never_covers_what_changes_the_program(
    tmp_path: Path, command: str
) -> None:
    allowed = [
        Rule(permission="bash", pattern="ls *", action="allow"),
        Rule(permission="bash", pattern="git log *", action="allow"),
        Rule(permission="bash", pattern="find *", action="allow"),
    ]
    assert decision(tmp_path, command, allowed).action == "ask"


@pytest.mark.parametrize(
    "command",
    ["nice make", "timeout 60 make test", "command make", "time make", "make"],
)
def test_scheduling_wrappers_are_transparent_for_allows(tmp_path: Path, command: str) -> None:
    allowed = [Rule(permission="bash", pattern="make *", action="allow")]
    assert decision(tmp_path, command, allowed).action == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "echo 'unterminated",
        "ls; echo $(",
        "touch made\n)",
        "if then fi",
        'echo "a" )(',
        "bash -c 'echo $('",
    ],
)
def test_a_line_that_does_not_parse_is_asked_even_when_bash_is_allowed(
    tmp_path: Path, command: str
) -> None:
    result = plan(tmp_path, command)
    assert result.unjudged
    allowed = [Rule(permission="bash", pattern="*", action="allow")]
    assert decide("bash", result.patterns, allowed, unjudged=result.unjudged).action == "ask"


def test_interpreter_code_is_its_own_pattern_never_an_rm_allow(tmp_path: Path) -> None:
    result = plan(tmp_path, "python3 -c 'import os; os.remove(\"x\")'")
    allowed = [Rule(permission="bash", pattern="rm *", action="allow")]
    assert decide("bash", result.patterns, allowed).action == "ask"
    assert result.unknown  # the code cannot be judged: an external_directory ask


def test_patterns_name_the_resolved_and_the_written_command(tmp_path: Path) -> None:
    assert plan(tmp_path, "sudo rm x").patterns == ("rm x", "sudo rm x")
    assert plan(tmp_path, "\\rm  'x'").patterns == ("rm x",)
    assert plan(tmp_path, "env -i nice rm x").patterns == ("rm x",)
    assert plan(tmp_path, "ls | xargs rm -f").patterns == ("ls", "rm -f", "xargs rm -f")
    assert plan(tmp_path, "git --no-pager -c a=b log").patterns == ("git log", "git -c a=b log")
    assert plan(tmp_path, "find . -delete").patterns == ("find . -delete", "rm .")


def test_always_patterns_follow_the_resolved_words(tmp_path: Path) -> None:
    result = plan(tmp_path, "sudo -u root git -c a=b push origin")
    assert "git push *" in result.always
    assert "sudo -u root git -c a=b push *" in result.always
    assert "sudo *" not in result.always


# --- end to end: `lsp-agent run --yes` with `rm *` denied -------------------------------


def write_config(config: dict[str, Any]) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))


def run_bash_calls(
    ws: Path, commands: list[str]
) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "bash", "input": {"command": c}}]} for c in commands
    ]
    script.append({"text": "finished"})
    with running_fake_llm(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        result = run_cli("run", "--yes", "--model", "anthropic/claude-test", "go", cwd=ws, env=env)
        bodies = [r.body for r in server.requests if r.turn != "side"]
    return result, bodies


def tool_results(bodies: list[Any]) -> list[dict[str, Any]]:
    last = bodies[-1]
    return [
        block
        for message in last["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


E2E_ATTACKS = [
    "\\rm f0",
    "r''m f1",
    '"rm" f2',
    "command rm f3",
    "/bin/rm f4",
    "env rm f5",
    "nice rm f6",
    "FOO=1 rm f7",
    "$(echo rm) f8",
    "echo f9 | xargs rm",
    "find . -name f10 -delete",
    "unlink f11",
    "bash -c 'rm f12'",
    "touch made\nrm f13 )",
]


def test_rm_denied_holds_for_every_spelling_through_lsp_agent_run(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for index in range(len(E2E_ATTACKS)):
        (ws / f"f{index}").write_text("keep me\n")
    write_config({"permission": {"bash": {"*": "allow", "rm *": "deny"}}, "sandbox": "off"})

    result, bodies = run_bash_calls(ws, E2E_ATTACKS)

    assert result.returncode in (0, 4), result.stderr
    kept = {p.name for p in ws.iterdir()}
    assert {f"f{i}" for i in range(len(E2E_ATTACKS))} <= kept
    assert not (ws / "made").exists()  # the unparseable line never ran its first part
    blocks = tool_results(bodies)
    assert len(blocks) == len(E2E_ATTACKS)
    assert all(block.get("is_error") for block in blocks)


def test_git_push_denied_holds_through_global_options(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    marker = tmp_path / "pushed"
    git = fake_bin / "git"
    git.write_text(f'#!/bin/sh\necho "$@" >> {marker}\n')
    git.chmod(0o755)
    write_config({"permission": {"bash": {"*": "allow", "git push *": "deny"}}, "sandbox": "off"})
    commands = [
        f"{git} -c a=b push",
        f"{git} --no-pager push",
        f"{git}  push",
        f"PATH={fake_bin} git push",
        f"{git} -C . push origin",
    ]

    result, _ = run_bash_calls(ws, commands)

    assert result.returncode in (0, 4), result.stderr
    assert not marker.exists()
