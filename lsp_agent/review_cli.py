"""``lsp-agent review [--staged | --base REF]``: the agent reviews your changes in the current
directory's git repository (docs/review.md, "Agent review of your changes").

stdout gets one line per finding, ``path:line: severity: message`` (the path relative to the
current directory, as compilers print them, so editors and ``grep`` read it); stderr the
model's summary. Exit status: 1 when any finding is an error, 0 otherwise (warnings alone do
not fail a pre-push check), 2 when the review could not run (not a repository, an unknown
revision, no model, the model failed).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from lsp_agent.code_review.findings import Finding

__all__ = ["EXIT_FAILED", "EXIT_FINDINGS", "add_review_parser", "run_review"]

EXIT_FINDINGS = 1
EXIT_FAILED = 2
REVIEW_MODE = "plan"
"""The model a ``plan`` session would start with (``agents.plan.model``, else ``model``)."""


def add_review_parser(commands: Any) -> None:
    review = commands.add_parser(
        "review",
        help="the agent reviews your changes: path:line: severity: message per finding",
        description="The agent reviews your changes (the work tree against HEAD by default) "
        "and prints one line per finding. Exit status: 1 when a finding is an error, "
        "0 otherwise, 2 when the review could not run.",
    )
    which = review.add_mutually_exclusive_group()
    which.add_argument("--staged", action="store_true", help="the staged changes only")
    which.add_argument("--base", metavar="REF", help="the work tree against REF (a branch…)")
    review.add_argument("--json", action="store_true", help="the findings as a JSON array")


async def run_review(
    args: argparse.Namespace, *, env: Mapping[str, str], cwd: Path, out: TextIO, err: TextIO
) -> int:
    # Imported here: the CLI's entry stays light for the other commands.
    from lsp_agent.app import AgentInputs
    from lsp_agent.code_review.changes import Scope, review_changes
    from lsp_agent.code_review.findings import cli_line, has_errors
    from lsp_agent.code_review.review import ReviewFailed
    from lsp_agent.core.errors import ConfigError
    from lsp_agent.headless import TerminalEditor
    from lsp_agent.runtime.host import AgentPlan, Runtime

    folder = os.path.realpath(cwd)
    inputs = AgentInputs(workspace=Path(folder), env=env)
    editor = TerminalEditor(stdout=out, stderr=err)
    runtime = await Runtime.open(
        env,
        plan=lambda _folder: AgentPlan(inputs=inputs, editor=editor, mcp_servers=False),
        one_agent=True,
    )
    try:
        try:
            app = await runtime.agent(folder)
        except ConfigError as error:
            err.write(f"lsp-agent review: {error}\n")
            return EXIT_FAILED
        provider, model = app.sessions.mode_model(REVIEW_MODE)
        err.write(f"Reviewing {Scope(staged=args.staged, base=args.base).describe()}…\n")
        result = await review_changes(
            folder,
            Scope(staged=args.staged, base=args.base),
            provider=provider,
            model=model.model,
            max_output_tokens=min(8192, model.max_output),
            mask=lambda text: app.secrets.mask(text).with_note(),
        )
    finally:
        await runtime.aclose()
    if isinstance(result, ReviewFailed):
        err.write(f"lsp-agent review: {result.reason}\n")
        return EXIT_FAILED
    if args.json:
        out.write(json.dumps([_json(f, folder) for f in result.findings], indent=2) + "\n")
    else:
        for finding in result.findings:
            out.write(cli_line(finding, folder) + "\n")
    if result.summary:
        err.write(result.summary.rstrip() + "\n")
    return EXIT_FINDINGS if has_errors(result.findings) else 0


def _json(finding: Finding, folder: str) -> dict[str, Any]:
    return {
        "path": os.path.relpath(finding.path, folder),
        "line": finding.line,
        "endLine": finding.end_line,
        "severity": finding.severity,
        "message": finding.message,
        "related": [
            {"path": os.path.relpath(r.path, folder), "line": r.line, "message": r.message}
            for r in finding.related
        ],
    }
