"""Finding 5: a command read the agent's own environment (``/proc/$PPID/environ``, the
provider key included) and sent it to the model encoded, past the literal-value filter.

Now the agent is not dumpable (``PR_SET_DUMPABLE`` 0, set by ``lsp-agent`` at start), a
command run as root loses ``CAP_SYS_PTRACE`` (which bypasses that), and in the sandbox its
own PID namespace shows no process of the agent at all. Checked through a real
``lsp-agent run``, with the sandbox on and off: the probe walks up its parent processes and
reads every environment it can.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

KEY = "sk-ant-CHILD-ENV-KEY-must-never-leak-9876"

PROBE = """
import base64, os
pid = os.getppid()
while pid > 0:
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    name = stat[stat.find(b"(") + 1 : stat.rfind(b")")].decode()
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            seen = base64.b64encode(f.read()).decode()
    except OSError as error:
        seen = "UNREADABLE-" + type(error).__name__
    print("ANCESTOR", pid, name, seen)
    pid = int(stat[stat.rfind(b")") + 2 :].split()[1])
"""


def ancestors(bodies: list[Any]) -> list[tuple[int, str, str]]:
    """The probe's lines in the tool result the model got."""
    (content,) = [
        block["content"]
        for message in bodies[-1]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    if not isinstance(content, str):
        content = "".join(part.get("text", "") for part in content)
    found = []
    for line in content.split("\n"):
        words = line.split(" ")
        if len(words) == 4 and words[0] == "ANCESTOR":
            found.append((int(words[1]), words[2], words[3]))
    return found


def run_probe(workspace: Path, home: Path, mode: str) -> tuple[Any, list[tuple[int, str, str]]]:
    (workspace / "probe.py").write_text(PROBE)
    config = home / ".config" / "lsp-agent" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"sandbox": mode}))
    calls = [{"tool_calls": [{"name": "bash", "input": {"command": "python3 probe.py"}}]}]
    with running_fake_llm([*calls, {"text": "done"}]) as server:
        result = run_cli(
            "run",
            "--yes",
            "--model",
            "anthropic/claude-test",
            "go",
            cwd=workspace,
            env={"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY},
        )
        bodies = [r.body for r in server.requests]
    assert result.returncode == 0, result.stderr
    assert KEY not in json.dumps(bodies)
    return result, ancestors(bodies)


def test_with_the_sandbox_off_the_agent_is_unreadable(workspace: Path, isolated_home: Path) -> None:
    _result, seen = run_probe(workspace, isolated_home, "off")

    names = [name for _pid, name, _env in seen]
    assert "python" in names[0] or "python3" in names[0]  # the supervisor
    agent = next(env for _pid, name, env in seen[1:] if name.startswith("python"))
    assert agent.startswith("UNREADABLE-")
    for _pid, _name, env in seen:
        if not env.startswith("UNREADABLE-"):
            assert KEY.encode() not in base64.b64decode(env)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_in_the_sandbox_no_process_of_the_agent_is_visible(
    workspace: Path, isolated_home: Path
) -> None:
    _result, seen = run_probe(workspace, isolated_home, "required")

    # only the sandbox's own: its leftover reporter (pid 2) and bubblewrap's init (pid 1)
    assert [(pid, name) for pid, name, _env in seen] == [(2, "sh"), (1, "bwrap")]
    for _pid, _name, env in seen:
        assert KEY.encode() not in base64.b64decode(env)
