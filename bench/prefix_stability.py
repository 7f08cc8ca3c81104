"""How much of each request is a byte-identical prefix of the next (prompt-cache friendliness).

Runs two turns (the second in a new process, as after a restart) of scripted ``read`` steps
against the fake LLM server and reports the bytes of system + tool definitions in the first
request, and for each request the share of its body that the next request repeats verbatim
as its prefix (raw, and ignoring the moving ``cache_control`` marks).

    python bench/prefix_stability.py [--steps 5]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from lsp_agent.testing.fake_llm import running_fake_llm


def strip_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_marks(v) for v in value]
    return value


def unchanged(value: Any) -> Any:
    return value


def ordered(body: dict[str, Any]) -> str:
    """The body in the order providers read it: system, tools, then the messages."""
    head = {k: body[k] for k in ("system", "tools") if k in body}
    return json.dumps(head) + json.dumps(body.get("messages", []))


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    call = {"tool_calls": [{"name": "read", "input": {"file_path": "a.py"}}]}
    script = [call] * args.steps + [{"text": "one"}] + [call] * args.steps + [{"text": "two"}]
    with tempfile.TemporaryDirectory() as tmp, running_fake_llm(script) as server:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        (ws / "AGENTS.md").write_text("Keep answers short.\n")
        (ws / "a.py").write_text("".join(f"v{i} = {i}\n" for i in range(50)))
        env = {
            **os.environ,
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "home" / ".config"),
            "LSP_AGENT_DATA_DIR": str(root / "data"),
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": "bench",
        }
        base = [sys.executable, "-m", "lsp_agent", "run", "--model", "anthropic/claude-bench"]
        subprocess.run([*base, "first"], cwd=ws, env=env, check=True, capture_output=True)
        listing = subprocess.run(
            [sys.executable, "-m", "lsp_agent", "sessions", "list", "--json"],
            cwd=ws, env=env, check=True, capture_output=True, text=True,
        )  # fmt: skip
        sid = json.loads(listing.stdout)["sessions"][0]["sessionId"]
        subprocess.run(
            [*base, "--session", sid, "second"], cwd=ws, env=env, check=True, capture_output=True
        )
        bodies = [r.body for r in server.requests if r.turn != "side"]
    first = bodies[0]
    head = len(json.dumps(first.get("system"))) + len(json.dumps(first.get("tools")))
    print(f"{len(bodies)} requests; system + tools in the first request: {head} bytes")
    for label, transform in (("raw", unchanged), ("without cache marks", strip_marks)):
        shares = []
        for before, after in itertools.pairwise(bodies):
            a, b = ordered(transform(before)), ordered(transform(after))
            shares.append(common_prefix(a, b) / len(a))
        print(
            f"{label}: share of each request repeated as the next one's prefix: "
            f"min {min(shares):.1%}, median {sorted(shares)[len(shares) // 2]:.1%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
