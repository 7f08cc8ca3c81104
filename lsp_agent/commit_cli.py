"""``lsp-agent commit-message``: the message for the staged changes, on stdout and nothing else.

Meant for ``git commit -m "$(lsp-agent commit-message)"`` or an editor's commit buffer: the
message is the whole of stdout; why there is none goes to stderr, with exit status 1
(``nothing staged``, no repository, the model failing or breaking the repository's
Conventional Commits twice) or 2 (no model configured, a bad flag).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

__all__ = ["add_commit_parser", "run_commit_message"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_commit_parser(commands: Any) -> None:
    """The ``commit-message`` subcommand on ``commands`` (argparse's subparsers)."""
    parser = commands.add_parser(
        "commit-message",
        help="a commit message for the staged changes, in the repository's style (stdout)",
    )
    parser.add_argument("--cwd", help="a folder in the repository (default: the current one)")
    parser.add_argument(
        "--model", help="the model to ask (provider/model; default: agents.commit.model)"
    )


async def run_commit_message(
    args: argparse.Namespace, *, env: Mapping[str, str], out: TextIO, err: TextIO
) -> int:
    from lsp_agent.app import AgentInputs, App
    from lsp_agent.core.commit_message import CommitMessageFailure
    from lsp_agent.core.errors import ConfigError
    from lsp_agent.headless import TerminalEditor
    from lsp_agent.runtime.commit_message import commit_message
    from lsp_agent.runtime.host import AgentPlan, Runtime

    workspace = Path(os.path.realpath(args.cwd or os.getcwd()))
    if not workspace.is_dir():
        err.write(f"not a folder: {workspace}\n")
        return EXIT_USAGE
    overrides: dict[str, Any] = {}
    if args.model:
        overrides = {"model": args.model, "agents": {"commit": {"model": args.model}}}
    inputs = AgentInputs(workspace=workspace, env=env, cli_overrides=overrides)
    editor = TerminalEditor(stdout=err, stderr=err)
    runtime = await Runtime.open(
        env,
        plan=lambda _folder: AgentPlan(inputs=inputs, editor=editor, mcp_servers=False),
    )

    async def agent() -> App:
        return await runtime.agent(str(workspace))

    try:
        try:
            result = await commit_message(agent, str(workspace))
        except ConfigError as error:  # no model configured too
            err.write(f"{error}\n")
            return EXIT_USAGE
    finally:
        await runtime.aclose()
    if isinstance(result, CommitMessageFailure):
        err.write(f"{result.reason}\n")
        return EXIT_FAILED
    out.write(result.text + "\n")
    return EXIT_OK
