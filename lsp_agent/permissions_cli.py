"""``lsp-agent permissions list|revoke``: the approvals "for this session" and "always"
answers saved, and taking one back (docs/permissions.md "Saved approvals").

They are listed for the project of the current directory (its workspace folder), or for
every project with ``--all``. ``revoke PERMISSION PATTERN`` takes back the project's
approval, ``--session ID`` one session's; the pattern is given exactly as ``list`` prints
it. Exit status as the rest of the CLI: 0 ok, 1 failed, 2 bad usage or nothing to revoke.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from lsp_agent.core.errors import LspAgentError
from lsp_agent.display import one_line

if TYPE_CHECKING:  # imported when run, so building the CLI's parser stays cheap
    from lsp_agent.runtime.sessions import SavedApproval

__all__ = ["add_permissions_parser", "approval_json", "run_permissions"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_permissions_parser(commands: Any) -> None:
    """Add ``permissions`` to the CLI's sub-command set (an ``argparse`` sub-parsers object)."""
    permissions = commands.add_parser("permissions", help="saved approvals: list and revoke")
    verbs = permissions.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = verbs.add_parser("list", help="this project's saved approvals")
    listing.add_argument("--all", action="store_true", help="every project")
    listing.add_argument("--json", action="store_true")
    revoke = verbs.add_parser("revoke", help="take back a saved approval")
    revoke.add_argument("permission", metavar="PERMISSION")
    revoke.add_argument("pattern", metavar="PATTERN", help="exactly as `permissions list` shows")
    revoke.add_argument("--session", metavar="ID", help="the approval of this session")


def approval_json(approval: SavedApproval) -> dict[str, str]:
    """The wire form (docs/protocol.md ``agent/permissions/list``, ``--json``)."""
    return {
        "scope": approval.scope,
        "scopeId": approval.scope_id,
        "permission": approval.permission,
        "pattern": approval.pattern,
        "sessionId": approval.session_id,
        "createdAt": approval.created_at,
    }


async def run_permissions(
    args: argparse.Namespace, *, env: Mapping[str, str], cwd: Path, out: TextIO, err: TextIO
) -> int:
    from lsp_agent.runtime.host import Runtime

    folder = Path(os.path.realpath(cwd)).as_uri()
    runtime = await Runtime.open(env)
    try:
        if args.verb == "list":
            saved = await runtime.sessions.approvals(None if args.all else folder)
            if args.json:
                out.write(json.dumps({"approvals": [approval_json(a) for a in saved]}) + "\n")
                return EXIT_OK
            for approval in saved:
                out.write(_line(approval) + "\n")
            if not saved:
                err.write("no saved approvals\n")
            return EXIT_OK
        revoked = await runtime.sessions.revoke(
            scope="session" if args.session else "project",
            scope_id=args.session or folder,
            permission=args.permission,
            pattern=args.pattern,
        )
        if not revoked:
            where = f"session {args.session}" if args.session else f"the project {folder}"
            err.write(
                f"lsp-agent: no saved approval {args.permission} {args.pattern!r} for {where} "
                "(see `lsp-agent permissions list`)\n"
            )
            return EXIT_USAGE
        out.write(f"revoked: {one_line(args.permission)} {one_line(args.pattern)}\n")
        return EXIT_OK
    except LspAgentError as error:
        err.write(f"lsp-agent: {error}\n")
        return EXIT_FAILED
    finally:
        await runtime.aclose()


def _line(approval: SavedApproval) -> str:
    """``project  bash  git status *`` or ``session ses_…  edit  *``; text escaped."""
    scope = "project" if approval.scope == "project" else f"session {approval.scope_id}"
    return f"{scope}  {one_line(approval.permission)}  {one_line(approval.pattern)}"
