"""Issue 38 §2: what ``lsp-agent run`` does before its first model request. With the key in
the environment and no key stored with ``auth set``, the keyring is not even imported, and no
program is started but the snapshot's git (keyring's backend discovery used to start ``ldconfig``
and ``gcc`` three times each). An audit hook in the run's own interpreter (``sitecustomize``)
notes every process it starts and what was imported when it connects to the fake LLM."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.provider_env import provider_env

SITECUSTOMIZE = """
import json, os, sys

_OUT, _PORT = os.environ["PROBE_OUT"], int(os.environ["PROBE_PORT"])
_started = []

def _audit(event, args, started=_started, out=_OUT, port=_PORT, sys=sys, json=json):
    if event == "subprocess.Popen":
        started.append([str(a) for a in args[1]][:1] + [str(a) for a in args[1]][-1:])
    elif event == "socket.connect" and isinstance(args[1], tuple) and args[1][1:2] == (port,):
        if not os.path.exists(out):
            seen = {"started": started, "keyring": "keyring" in sys.modules}
            with open(out, "w") as f:
                json.dump(seen, f)

sys.addaudithook(_audit)
"""


def first_request(workspace: Path, site: Path, fake_llm: FakeLLMServer) -> dict[str, Any]:
    """One ``run``: the processes it started before its first request, and whether
    ``keyring`` was imported then."""
    out = site / "first-request.json"
    out.unlink(missing_ok=True)
    fake_llm.set_script([{"text": "hello"}])
    env = {
        **provider_env(fake_llm, "sk-first-request-SECRET-1"),
        "PYTHONPATH": os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p),
        "PROBE_OUT": str(out),
        "PROBE_PORT": str(fake_llm.port),
    }
    result = run_cli("run", "--model", "anthropic/claude-test", "hi", cwd=workspace, env=env)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(out.read_text()))


def test_with_the_key_in_the_environment_the_keyring_is_left_alone(
    workspace: Path, tmp_path: Path, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND")  # keyring's own choice, as on a user's machine
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    first = first_request(workspace, site, fake_llm)  # no list of stored keys yet: probed
    assert not [p for p in first["started"] if Path(p[0]).name != "git"]
    again = first_request(workspace, site, fake_llm)
    assert again["keyring"] is False
    assert [p for p in again["started"] if Path(p[0]).name != "git"] == []
