"""Finding 4: every argument of a command that could be a path is judged, after the same
word resolution as the rules; what cannot be judged before the shell runs is asked; the
agent's data folder is out of every tool's reach, even inside a workspace folder."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.shell.plan import PermissionPlan, plan_permissions
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm
from lsp_agent.workspace.boundary import Outside, WorkspaceBoundary, hidden_search_globs

KEY = "sk-ant-bash-paths-test"


@pytest.fixture
def workspace(workspace: Path) -> Path:
    (workspace / "sub").mkdir()
    (workspace / "a.txt").write_text("a\n")
    return workspace


def plan(
    workspace: Path,
    command: str,
    *,
    env: dict[str, str] | None = None,
    hidden: tuple[str, ...] = (),
) -> PermissionPlan:
    return plan_permissions(
        command,
        workdir=str(workspace),
        boundary=WorkspaceBoundary([workspace], hidden=hidden),
        home=str(workspace.parent / "home"),
        env=env or {},
    )


OUTSIDE = [
    "/bin/touch ../x",
    "\\touch ../x",
    "cp a.txt --target-directory=..",
    "cp -t .. a.txt",
    "cp --target-directory ../ a.txt",
    "dd if=a.txt of=../x",
    "sort -o../x a.txt",
    "echo hi > $PWD/../x",
    'echo hi > "${PWD}/../x"',
    "echo hi >> ../x",
    "env -C .. touch x",
    "env --chdir=.. touch x",
    "git -C .. init",
    "git --git-dir=../g status",
    "sudo -D .. touch x",
    "find .. -delete",
    "find .. -name x -exec rm {} +",
    "bash -c 'touch ../x'",
    "sh -c 'cd .. && touch x'",
    "eval 'touch ../x'",
    "eval cd ..; touch x",
    "nice -n 1 touch ../x",
    "FOO=../x make",
    "tar -C .. -xf a.tar",
    "grep -r KEY ~/notes",  # ~/.ssh itself is a credential store: refused outright
    "cat ~/x",
    "tee ../x < a.txt",
    "ln -s a.txt ../link",
    "sed -i s/a/b/ ../x",
    "touch sub/../../x",
    "mkdir -p /tmp/elsewhere",
    "xargs -a ../list rm",
    "rsync -a . ../copy",
    "nice cd sub && cat ../x",  # /usr/bin/cd: the shell may stay where it was
]


@pytest.mark.parametrize("command", OUTSIDE)
def test_paths_outside_the_workspace_are_found_after_resolution(
    workspace: Path, command: str
) -> None:
    result = plan(workspace, command)
    assert result.outside, result


UNJUDGEABLE = [
    "touch a{1,2}/../../x",
    "touch {..,.}/x",
    "touch ~+/../x",
    "touch ~-/x",
    "touch ~root/x",
    "cd $d && touch x",
    'cd "$D"',
    "cd `pwd`/..",
    "touch $X",
    'touch "$X"/y',
    "touch $(echo ../x)",
    "cp a.txt --target-directory=$T",
    "dd if=a.txt of=$OUT",
    "echo hi > $OUT",
    "env -C $D touch x",
    "git -C $D init",
    'python3 -c \'open("../x", "w")\'',
    "python3 - < script.py",
    "cat a.txt | python3",
    "perl -e 'unlink \"../x\"'",
    'node -e \'require("fs").rmSync("..")\'',
    "ruby -e 'File.delete(\"../x\")'",
    "bash < script.sh",
    "source ./env.sh; touch x",
    "rm -rf .*",
    "rm -rf */../../x*",
    "HOME=/etc; cat ~/passwd",
    "source ./env.sh",
    ". ./env.sh",
    "BASH_ENV=./x.sh bash -c ls",
    "LD_PRELOAD=./x.so ls",
    "git -c alias.p='!rm ../x' p",
    "git -c core.sshCommand='touch ../x' fetch",
    "git --exec-path=../bin status",
]


@pytest.mark.parametrize("command", UNJUDGEABLE)
def test_what_cannot_be_judged_before_it_runs_is_listed_for_an_ask(
    workspace: Path, command: str
) -> None:
    result = plan(workspace, command)
    assert result.unknown or result.outside, result


def test_cdpath_makes_a_relative_cd_unjudgeable(workspace: Path) -> None:
    assert plan(workspace, "cd sub && touch x").unknown == ()
    assert plan(workspace, "cd sub && touch x", env={"CDPATH": str(workspace.parent)}).unknown
    assert plan(workspace, "CDPATH=.. ; cd sub").unknown
    assert plan(workspace, "export CDPATH=/; cd sub && touch x").unknown


@pytest.mark.parametrize(
    "command",
    [
        "touch a b/c",
        "cp a.txt b.txt",
        "dd if=a.txt of=b.txt",
        "git status",
        "git -C sub status",
        "ls -la",
        "grep -r foo .",
        "sed -i 's/a/b/' a.txt",
        "echo $HOME $X",
        "printf '%s\\n' ../x",
        "echo hi > $PWD/out.txt",
        "cat a.txt | head -5 > /dev/null 2>&1",
        "find . -name '*.py' -delete",
        "env -C sub touch x",
        "bash -c 'touch x'",
        "rm -rf build/*",
        "ls *.txt",
    ],
)
def test_paths_inside_the_workspace_ask_nothing_extra(workspace: Path, command: str) -> None:
    result = plan(workspace, command)
    assert (result.outside, result.unknown) == ((), ()), result


def test_env_and_git_directory_options_move_the_command(workspace: Path) -> None:
    assert plan(workspace, "env -C sub rm ../a.txt").outside == ()
    assert plan(workspace, "env -C sub rm ../../x").outside == (str(workspace.parent),)
    assert plan(workspace, "git -C sub add ../a.txt").outside == ()


# --- the data folder -----------------------------------------------------------------


def test_the_data_folder_inside_a_workspace_is_outside_for_every_path(workspace: Path) -> None:
    data = workspace / "data"
    (data / "tool-output" / "ses_1").mkdir(parents=True)
    boundary = WorkspaceBoundary([workspace], hidden=(data,))
    where = boundary.resolve("data/lsp-agent.db")
    assert isinstance(where, Outside)
    assert where.hidden
    spill = data / "tool-output" / "ses_1"
    assert not isinstance(boundary.resolve(str(spill / "x"), extra_roots=(spill,)), Outside)
    assert isinstance(boundary.resolve("data/x", extra_roots=(workspace,)), Outside)
    assert hidden_search_globs(str(workspace), (str(data),)) == ["--glob=!/data"]
    for command in ("cat data/lsp-agent.db", "grep -r KEY data", "cd data && cat x", "ls ."):
        result = plan(workspace, command, hidden=(str(data),))
        if command == "ls .":
            assert result.hidden == ()
        else:
            assert result.hidden, command


def test_the_default_hidden_folder_is_the_configured_data_folder(workspace: Path) -> None:
    data = Path(os.environ["LSP_AGENT_DATA_DIR"])
    boundary = WorkspaceBoundary([data.parent])
    where = boundary.resolve(str(data / "lsp-agent.db"))
    assert isinstance(where, Outside)
    assert where.hidden


# --- end to end --------------------------------------------------------------------


def run_calls(
    workspace: Path, calls: list[tuple[str, dict[str, Any]]], env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": name, "input": args}]} for name, args in calls
    ]
    script.append({"text": "finished"})
    with running_fake_llm(script) as server:
        full = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        full.update(env or {})
        result = run_cli(
            "run", "--yes", "--model", "anthropic/claude-test", "go", cwd=workspace, env=full
        )
        bodies = [r.body for r in server.requests if r.turn != "side"]
    return result, bodies


def results(bodies: list[Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in bodies[-1]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def allow_bash() -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permission": {"bash": "allow"}, "sandbox": "off"}))


E2E_OUTSIDE = [
    "/bin/touch ../leak0",
    "cp a.txt --target-directory=.. && mv ../a.txt ../leak1",
    "touch sub{,/../..}/leak2",
    "touch ~+/../leak3",
    "d=..; cd $d && touch leak4",
    "echo x > $PWD/../leak5",
    "env -C .. touch leak6",
    "git -C .. init -q leak7",
    "dd if=a.txt of=../leak8 status=none",
    "python3 -c \"open('../leak9', 'w')\"",
    "bash -c 'touch ../leak10'",
    "eval 'touch ../leak11'",
]


def test_nothing_is_written_outside_by_any_spelling_with_yes(workspace: Path) -> None:
    allow_bash()
    calls: list[tuple[str, dict[str, Any]]] = []
    for command in E2E_OUTSIDE:  # a success between attacks: the breaker never withholds bash
        calls += [("bash", {"command": command}), ("bash", {"command": "true"})]

    result, bodies = run_calls(workspace, calls)

    assert result.returncode in (0, 4), result.stderr
    written = sorted(p.name for p in workspace.parent.iterdir() if p.name.startswith("leak"))
    assert written == []
    blocks = results(bodies)
    assert len(blocks) == len(calls)
    refused = [block for block in blocks[::2] if block.get("is_error")]
    assert len(refused) == len(E2E_OUTSIDE)
    assert "external_directory" in json.dumps(refused)
    assert not any(block.get("is_error") for block in blocks[1::2])


def test_find_delete_outside_deletes_nothing(workspace: Path) -> None:
    allow_bash()
    victim = workspace.parent / "victim.txt"
    victim.write_text("keep\n")

    result, _ = run_calls(workspace, [("bash", {"command": "find .. -name victim.txt -delete"})])

    assert result.returncode in (0, 4), result.stderr
    assert victim.exists()


def test_no_tool_reads_the_data_folder_inside_the_workspace(workspace: Path) -> None:
    allow_bash()
    data = workspace / "agent-data"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("grep", {"pattern": "session_created"}),
        ("grep", {"pattern": "session_created", "path": "agent-data"}),
        ("read", {"file_path": "agent-data/lsp-agent.db"}),
        ("glob", {"pattern": "**/*.db"}),
        ("list", {"path": "agent-data"}),
        ("bash", {"command": "grep -ra session_created agent-data"}),
        ("bash", {"command": "cat agent-data/lsp-agent.db"}),
    ]

    result, bodies = run_calls(workspace, calls, env={"LSP_AGENT_DATA_DIR": str(data)})

    assert result.returncode in (0, 4), result.stderr
    assert (data / "lsp-agent.db").exists()
    blocks = results(bodies)
    assert len(blocks) == len(calls)
    for index in (0, 3):  # searching the workspace never enters the data folder
        assert "lsp-agent.db" not in json.dumps(blocks[index]), blocks[index]
    assert "sessionId" not in json.dumps(blocks)
    for index in (1, 2, 4, 5, 6):
        assert blocks[index].get("is_error"), blocks[index]
