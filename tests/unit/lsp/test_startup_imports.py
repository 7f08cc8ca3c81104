"""What ``lsp-agent serve`` imports before it can answer ``initialize``: the server and the
protocol, never the agent (the app, the providers' SDKs, the store, the tools) — those come
after the answer (``lsp/startup.py``). A fresh interpreter, so nothing else imported them."""

from __future__ import annotations

import json
import subprocess
import sys

AFTER_THE_ANSWER = (
    "lsp_agent.app",
    "lsp_agent.lsp.host",
    "lsp_agent.lsp.handlers",
    "lsp_agent.lsp.commands",
    "lsp_agent.storage.event_log",
    "lsp_agent.tools.registry",
    "anthropic",
    "openai",
    "httpx",
)


def test_building_the_server_imports_nothing_of_the_agent() -> None:
    probe = (
        "import json, sys\n"
        "from lsp_agent.lsp.features import build_server\n"
        "build_server({})\n"
        f"print(json.dumps([m for m in {list(AFTER_THE_ANSWER)!r} if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )

    assert json.loads(done.stdout) == []
