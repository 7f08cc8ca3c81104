"""httpx (only ``webfetch`` uses it; the SDKs run on httpx2) loads on the first fetch, not
with the app: it and what it pulls in cost ~100 ms of every start-up. A fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
import lsp_agent.app
from lsp_agent.tools.webfetch import WebfetchTool
WebfetchTool(allow_hosts=["example.com"])
lazy = ("httpx", "httpcore", "lsp_agent.web.fetch")
print(json.dumps([m for m in lazy if m in sys.modules]))
"""


def test_the_app_and_the_tool_load_without_httpx() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == []
