"""``python -m lsp_agent.testing.fake_llm``: serve a script until SIGTERM/SIGINT, then write
the log."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from lsp_agent.testing.fake_llm.script import Script, ScriptError, load_script
from lsp_agent.testing.fake_llm.server import FakeLLMServer


async def _serve_cli(server: FakeLLMServer) -> None:
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        line = {
            "port": server.port,
            "anthropic_base_url": server.anthropic_base_url,
            "openai_base_url": server.openai_base_url,
        }
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: serve a script until SIGTERM/SIGINT, then write the log."""
    parser = argparse.ArgumentParser(
        prog="python -m lsp_agent.testing.fake_llm",
        description="Scripted fake Anthropic/OpenAI streaming server (see docs/fake-llm.md).",
    )
    parser.add_argument("--script", type=Path, help="JSON script file (default: empty script)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--log", type=Path, help="write the request log as JSON here on exit")
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script) if args.script is not None else Script()
    except ScriptError as err:
        print(err, file=sys.stderr)
        return 2
    server = FakeLLMServer(script, host=args.host, port=args.port)
    try:
        asyncio.run(_serve_cli(server))
    finally:
        if args.log is not None:
            text = json.dumps(server.log_json(), indent=2, ensure_ascii=False)
            args.log.write_text(text + "\n", encoding="utf-8")
    return 0
