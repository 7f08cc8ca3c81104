"""The command sandbox (bubblewrap): what a program the command parser cannot see may do.

The probes are Python programs piped in or run from a file, so no argument check sees what
they touch: only the sandbox stands between them and the rest of the machine. These tests
need a working ``bwrap`` (CI installs it); the fallback paths fake its absence.
"""

from __future__ import annotations

import base64
import logging
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.config.load import load_settings
from lsp_agent.config.settings import InvalidConfig
from lsp_agent.core.permission.rules import ALLOWED, PermissionRequest, PermissionVerdict
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.sandbox import Availability, CommandSandbox, check_availability
from lsp_agent.sandbox.bwrap import bwrap_argv
from lsp_agent.sandbox.policy import policy_for
from lsp_agent.testing.permissions import RecordingAsk, allow_all, deny
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.bash import BashParams, BashTool
from tests.support.sandbox_python import sandbox_python

WORKS = check_availability({"PATH": "/usr/bin:/bin"}, ())
needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (CI installs it)"
)
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")


PROBE_PYTHON = sandbox_python()


def piped(code: str) -> str:
    """A Python program the parser cannot read: base64 piped into ``python3 -``."""
    return f"echo {base64.b64encode(code.encode()).decode()} | base64 -d | {PROBE_PYTHON} -"


async def run(
    workspace: Path,
    command: str,
    *,
    sandbox: CommandSandbox,
    ask: RecordingAsk | None = None,
    hidden_env: tuple[str, ...] = (),
    **params: object,
) -> ToolOutcome:
    tool = BashTool(hidden_env=hidden_env, sandbox=sandbox)
    ctx = tool_context(workspace, ask=ask or allow_all)
    return await tool.run(BashParams.model_validate({"command": command, **params}), ctx)


@pytest.fixture
def visible_outside() -> Iterator[Path]:
    """A folder outside /tmp (which the sandbox replaces): visible there, read-only."""
    folder = Path(tempfile.mkdtemp(prefix="lsp-agent-sandbox-", dir="/var/tmp"))
    folder.chmod(0o755)  # as root, a folder only root may read is hidden too
    (folder / "existing.txt").write_text("OUTSIDE-CONTENT\n")
    yield folder
    shutil.rmtree(folder)


def sandboxed(**kwargs: object) -> CommandSandbox:
    return CommandSandbox("required", **kwargs)  # type: ignore[arg-type]


# --- the filesystem ---------------------------------------------------------------------


@needs_bwrap
async def test_a_hidden_program_writes_the_workspace_but_nothing_outside(
    workspace: Path, tmp_path: Path, visible_outside: Path
) -> None:
    code = f"""
import pathlib
pathlib.Path("inside.txt").write_text("ok")
for target in ({str(visible_outside / "new.txt")!r}, {str(tmp_path / "sibling.txt")!r}):
    try:
        pathlib.Path(target).write_text("escaped")
        print("WROTE", target)
    except OSError as error:
        print("REFUSED", type(error).__name__)
print(open({str(visible_outside / "existing.txt")!r}).read().strip())
"""
    outcome = await run(workspace, piped(code), sandbox=sandboxed())

    assert outcome.details.sandboxed is True
    assert f"WROTE {visible_outside}" not in outcome.output  # read-only there
    assert "REFUSED OSError" in outcome.output  # /tmp is its own: that write went nowhere
    assert "OUTSIDE-CONTENT" in outcome.output  # the rest of the system stays readable
    assert (workspace / "inside.txt").read_text() == "ok"
    assert not (visible_outside / "new.txt").exists()
    assert not (tmp_path / "sibling.txt").exists()


@needs_bwrap
async def test_home_is_hidden_except_what_allow_read_lists(
    workspace: Path, isolated_home: Path
) -> None:
    (isolated_home / ".ssh").mkdir(exist_ok=True)
    (isolated_home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-BODY\n")
    (isolated_home / ".gitconfig").write_text("[user]\n\tname = Listed Reader\n")
    code = """
import os, pathlib
home = pathlib.Path(os.environ["HOME"])
for name in (".ssh/id_rsa", ".gitconfig"):
    try:
        print(name, (home / name).read_text().strip())
    except OSError as error:
        print(name, "HIDDEN", type(error).__name__)
"""
    outcome = await run(workspace, piped(code), sandbox=sandboxed(allow_read=["~/.gitconfig"]))

    assert "PRIVATE-KEY-BODY" not in outcome.output
    assert ".ssh/id_rsa HIDDEN" in outcome.output
    assert "Listed Reader" in outcome.output


@needs_bwrap
async def test_by_default_toolchains_in_home_run_and_credentials_stay_hidden(
    workspace: Path, isolated_home: Path
) -> None:
    """A workspace's tools often live under $HOME (pyenv, cargo): the default allow_read
    shows those, never the files beside them that hold credentials."""
    bin_dir = isolated_home / ".cargo" / "bin"
    bin_dir.mkdir(parents=True)
    tool = bin_dir / "hometool"
    tool.write_text(
        "#!/bin/sh\necho HOME-TOOL-RAN\n"
        'cat "$HOME/.cargo/credentials.toml" || echo CREDENTIALS-HIDDEN\n'
    )
    tool.chmod(0o755)
    (isolated_home / ".cargo" / "credentials.toml").write_text('token = "CARGO-TOKEN"\n')
    default = load_settings(
        workspace=workspace, env={"HOME": str(isolated_home)}
    ).sandbox.allow_read
    # named through $HOME, so no approved path argument opens its folder to the command
    command = '"$HOME/.cargo/bin/hometool"'

    outcome = await run(workspace, command, sandbox=sandboxed(allow_read=default))

    assert "HOME-TOOL-RAN" in outcome.output
    assert "CARGO-TOKEN" not in outcome.output
    assert "CREDENTIALS-HIDDEN" in outcome.output


@needs_bwrap
@pytest.mark.parametrize("where", ["workspace", "home", "elsewhere"])
async def test_the_data_folder_is_invisible_wherever_it_is(
    workspace: Path, isolated_home: Path, visible_outside: Path, where: str
) -> None:
    parent = {"workspace": workspace, "home": isolated_home, "elsewhere": visible_outside}[where]
    data = parent / "agent-data"
    data.mkdir()
    (data / "lsp-agent.db").write_text("TRANSCRIPTS")
    code = f"""
import os
print("ENTRIES", os.listdir({str(data)!r}))
try:
    open({str(data / "planted")!r}, "w").write("x")
    print("WROTE")
except OSError as error:
    print("REFUSED", type(error).__name__)
"""
    outcome = await run(
        workspace, piped(code), sandbox=sandboxed(allow_read=[str(parent)], hidden=[str(data)])
    )

    assert "ENTRIES []" in outcome.output
    assert "TRANSCRIPTS" not in outcome.output
    assert "WROTE" not in outcome.output
    assert not (data / "planted").exists()


# --- the network ------------------------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[int]:
    """A loopback listener outside the sandbox; connections wait in its backlog."""
    server = socket.create_server(("127.0.0.1", 0))
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def connect(port: int) -> str:
    return piped(f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    print("CONNECTED")
except OSError as error:
    print("NO NETWORK", type(error).__name__)
""")


@needs_bwrap
async def test_no_network_without_the_flag(workspace: Path, listener: int) -> None:
    ask = RecordingAsk()

    outcome = await run(workspace, connect(listener), sandbox=sandboxed(), ask=ask)

    assert "NO NETWORK" in outcome.output
    assert "bash_network" not in ask.permissions()


@needs_bwrap
async def test_the_flag_asks_bash_network_and_then_connects(workspace: Path, listener: int) -> None:
    ask = RecordingAsk()

    outcome = await run(workspace, connect(listener), sandbox=sandboxed(), ask=ask, network=True)

    assert "CONNECTED" in outcome.output
    assert ask.permissions()[-1] == "bash_network"
    (request,) = [r for r in ask.requests if r.permission == "bash_network"]
    assert request.patterns == next(r for r in ask.requests if r.permission == "bash").patterns


async def test_a_refused_bash_network_runs_nothing(workspace: Path) -> None:
    def refuse(request: PermissionRequest) -> PermissionVerdict:
        return deny("no network") if request.permission == "bash_network" else ALLOWED

    outcome = await run(
        workspace, "touch marker", sandbox=sandboxed(), ask=RecordingAsk(refuse), network=True
    )

    assert outcome.is_error
    assert "bash_network" in outcome.output
    assert not (workspace / "marker").exists()


# --- nothing outlives the command, the agent is out of reach ---------------------------

ESCAPES = """
import os, subprocess, sys, time
subprocess.run(["setsid", "-f", "sleep", "{token}1"], check=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "{token}2"])
    os._exit(0)
time.sleep(0.3)
print("STARTED")
"""


def running_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if token.encode() in cmdline and b"base64" not in cmdline:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("mode", ["required", "off"])
async def test_nothing_a_command_starts_survives_it(workspace: Path, mode: str) -> None:
    if mode == "required" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (CI installs it)")
    token = f"98{len(mode)}7654"

    outcome = await run(workspace, piped(ESCAPES.format(token=token)), sandbox=CommandSandbox(mode))  # type: ignore[arg-type]

    assert "STARTED" in outcome.output
    assert outcome.details.sandboxed is (mode == "required")
    assert running_with(token) == []


@needs_bwrap
async def test_the_agents_environment_is_out_of_reach(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-ant-SANDBOX-KEY-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    code = """
import base64, os
seen = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            seen.append(open(f"/proc/{pid}/environ", "rb").read())
        except OSError:
            pass
print(len(seen), base64.b64encode(b"|".join(seen)).decode())
"""
    outcome = await run(
        workspace, piped(code), sandbox=sandboxed(), hidden_env=("ANTHROPIC_API_KEY",)
    )

    count, encoded = outcome.output.split("\n")[0].split(" ")
    assert int(count) >= 1  # it did read environments: its own processes'
    assert key.encode() not in base64.b64decode(encoded)


# --- modes and their notices ------------------------------------------------------------

UNAVAILABLE = Availability(works=False, reason="bwrap is not installed: install bubblewrap")


async def test_required_refuses_to_run_where_bubblewrap_does_not_work(workspace: Path) -> None:
    sandbox = CommandSandbox("required", check=lambda env, avoid: UNAVAILABLE)

    outcome = await run(workspace, "touch marker", sandbox=sandbox)

    assert outcome.is_error
    assert "sandbox is required" in outcome.output
    assert "bwrap is not installed" in outcome.output
    assert not (workspace / "marker").exists()


async def test_auto_runs_unsandboxed_with_a_notice_once_per_session(
    workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tool = BashTool(
        hidden_env=(), sandbox=CommandSandbox("auto", check=lambda env, avoid: UNAVAILABLE)
    )
    ctx = tool_context(workspace, ask=allow_all)
    with caplog.at_level(logging.WARNING):
        first = await tool.run(BashParams(command="echo one"), ctx)
        second = await tool.run(BashParams(command="echo two"), ctx)

    assert first.output.startswith("one\n")
    assert "Not sandboxed: bwrap is not installed" in first.output
    assert "Not sandboxed" not in second.output
    assert first.details.sandboxed is second.details.sandboxed is False
    assert [r.getMessage() for r in caplog.records if "without the sandbox" in r.getMessage()]


def test_availability_says_why_not(tmp_path: Path) -> None:
    missing = check_availability({"LSP_AGENT_BWRAP": str(tmp_path / "no-bwrap")}, ())
    failing = tmp_path / "bwrap"
    failing.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    failing.chmod(0o755)
    broken = check_availability({"LSP_AGENT_BWRAP": str(failing)}, ())

    assert not missing.works
    assert "not found" in missing.reason
    assert "install bubblewrap" in missing.reason
    assert not broken.works
    assert "No permissions to create new namespace" in broken.reason


@needs_bwrap
def test_availability_works_with_bubblewrap() -> None:
    assert WORKS.works, WORKS.reason
    assert "bubblewrap" in WORKS.reason


def test_the_more_specific_mount_wins_and_the_data_folder_is_hidden_last(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "project"
    data = project / ".data"
    data.mkdir(parents=True)
    policy = policy_for(
        writable=[str(project)],
        allow_read=["~/.none"],
        home=str(home),
        hidden=[str(data)],
        network=False,
    )
    argv = bwrap_argv("bwrap", policy, workdir=str(project), command=["true"], env={})
    home_at = argv.index(str(home))
    project_at = argv.index("--bind", 3) + 1

    assert argv[home_at - 1] == "--tmpfs"
    assert argv[project_at] == str(project)
    assert home_at < project_at < argv.index(str(data))
    assert "--unshare-net" in argv
    assert "--unshare-pid" in argv
    assert argv[-2:] == ["--", "true"]


# --- configuration ----------------------------------------------------------------------


def test_sandbox_config_accepts_the_string_shorthand_and_merges_per_key(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    user.write_text('{"sandbox": {"allow_read": ["~/.npmrc"]}}')
    (tmp_path / ".lsp-agent.json").write_text('{"sandbox": "required"}')

    settings = load_settings(workspace=tmp_path, env={"HOME": str(tmp_path)}, user_file=user)

    assert settings.sandbox.mode == "required"
    assert settings.sandbox.allow_read == ["~/.npmrc"]
    assert "bash_network" in {r.permission for r in settings.permission_rules}


@pytest.mark.parametrize("project", ['{"sandbox": "off"}', '{"sandbox": {"allow_read": ["/etc"]}}'])
def test_an_untrusted_project_cannot_loosen_the_sandbox(tmp_path: Path, project: str) -> None:
    (tmp_path / ".lsp-agent.json").write_text(project)

    with pytest.raises(InvalidConfig, match="sandbox"):
        load_settings(workspace=tmp_path, env={"HOME": str(tmp_path)}, user_file=tmp_path / "u")


# --- end to end: `lsp-agent run` and `lsp-agent doctor` ---------------------------------

E2E_PROBE = """
import os, pathlib, socket, sys
home = pathlib.Path(os.environ["HOME"])
try:
    print("SSH", (home / ".ssh" / "id_rsa").read_text().strip())
except OSError as error:
    print("SSH HIDDEN", type(error).__name__)
print("DATA", sorted(os.listdir(os.environ["LSP_AGENT_DATA_DIR"])))
try:
    open(pathlib.Path("target.txt").read_text(), "w").write("escaped")
    print("OUTSIDE WROTE")
except OSError as error:
    print("OUTSIDE REFUSED", type(error).__name__)
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
    print("NET CONNECTED")
except OSError as error:
    print("NET NONE", type(error).__name__)
"""


def agent_run(
    workspace: Path, home: Path, config: dict[str, object], call: dict[str, object], **env: str
) -> tuple[str, str]:
    """One `lsp-agent run --yes` making one bash call: (its tool result, stderr)."""
    import json

    from lsp_agent.testing.cli import run_cli
    from lsp_agent.testing.fake_llm import running_fake_llm

    path = home / ".config" / "lsp-agent" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))
    script = [{"tool_calls": [{"name": "bash", "input": call}]}, {"text": "done"}]
    with running_fake_llm(script) as server:
        result = run_cli(
            "run",
            "--yes",
            "--model",
            "anthropic/claude-test",
            "go",
            cwd=workspace,
            env={"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": "k", **env},
        )
        last = server.requests[-1].body
    assert result.returncode == 0, result.stderr
    (content,) = [
        block["content"]
        for message in last["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
    return text, result.stderr


@needs_bwrap
@pytest.mark.parametrize("network", [False, True])
def test_a_sandboxed_run_keeps_a_hidden_program_in(
    workspace: Path, isolated_home: Path, visible_outside: Path, listener: int, network: bool
) -> None:
    (isolated_home / ".ssh").mkdir(exist_ok=True)
    (isolated_home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-BODY\n")
    (workspace / "probe.py").write_text(E2E_PROBE)
    target = visible_outside / "escaped.txt"
    (workspace / "target.txt").write_text(str(target))  # out of the argument checks' sight
    call = {"command": f"python3 probe.py {listener}", "network": network}

    text, _stderr = agent_run(workspace, isolated_home, {"sandbox": "required"}, call)

    assert "SSH HIDDEN" in text
    assert "PRIVATE-KEY-BODY" not in text
    assert "DATA []" in text
    assert "OUTSIDE REFUSED" in text
    assert not target.exists()
    assert ("NET CONNECTED" if network else "NET NONE") in text


def test_a_run_where_the_sandbox_is_required_but_missing_runs_nothing(
    workspace: Path, isolated_home: Path
) -> None:
    call = {"command": "touch marker"}

    text, _ = agent_run(
        workspace,
        isolated_home,
        {"sandbox": "required"},
        call,
        LSP_AGENT_BWRAP="/nonexistent/bwrap",
    )

    assert "sandbox is required" in text
    assert "not found" in text
    assert not (workspace / "marker").exists()


def test_a_run_in_auto_mode_without_bubblewrap_says_so(
    workspace: Path, isolated_home: Path
) -> None:
    text, stderr = agent_run(
        workspace,
        isolated_home,
        {},
        {"command": "touch marker"},
        LSP_AGENT_BWRAP="/nonexistent/bwrap",
    )

    assert (workspace / "marker").exists()
    assert "Not sandboxed: /nonexistent/bwrap (LSP_AGENT_BWRAP) was not found" in text
    assert "commands run without the sandbox" in stderr


@pytest.mark.parametrize(
    ("config", "bwrap", "line"),
    [
        ({}, None, "ok    sandbox: bubblewrap works"),
        ({}, "/nonexistent/bwrap", "warn  sandbox: /nonexistent/bwrap (LSP_AGENT_BWRAP) was not"),
        ({"sandbox": "required"}, "/nonexistent/bwrap", "FAIL  sandbox: required but"),
        ({"sandbox": "off"}, "/nonexistent/bwrap", "ok    sandbox: off (sandbox.mode)"),
    ],
)
def test_doctor_says_whether_the_sandbox_works_and_why_not(
    tmp_path: Path, isolated_home: Path, config: dict[str, object], bwrap: str | None, line: str
) -> None:
    import json

    from lsp_agent.testing.cli import run_cli

    if bwrap is None and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (CI installs it)")
    path = isolated_home / ".config" / "lsp-agent" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))

    result = run_cli("doctor", cwd=tmp_path, env={"LSP_AGENT_BWRAP": bwrap} if bwrap else {})

    assert line in result.stdout
