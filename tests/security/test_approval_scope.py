"""Issue 31 point 6: an approval saves what the person saw.

Today "always" on ``git 'c*' --help`` saved ``git c* *`` (and ``git clean -fdx`` then ran
unasked), "always" on one outside file saved a recursive ``~/*``, and "always" on an MCP tool
named ``get*`` covered ``get_secrets_and_delete``. Here: the words a model supplies are
literal in what is saved (``[*]``, ``[?]``, ``[[]``, honoured by the matcher), outside
approvals name the file or folder asked for and nothing below it, every prompt names the
exact patterns "session"/"always" save, and saved approvals belong to the project: listed and
revoked with ``lsp-agent permissions``, kept by ``sessions delete``, never revived by a
replay of the log."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lsp_agent.acp.permission import permission_request
from lsp_agent.app import open_data_store
from lsp_agent.core.events import NewEvent
from lsp_agent.core.permission.rules import (
    PermissionAsk,
    PermissionRequest,
    Rule,
    decide,
    literal,
    options_for,
    wildcard_match,
)
from lsp_agent.core.permission.subjects import CommandSubject
from lsp_agent.headless import render_ask
from lsp_agent.shell.plan import plan_permissions
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.permissions import RecordingAsk, deny
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.read import ReadParams, ReadTool
from lsp_agent.workspace.boundary import WorkspaceBoundary

ASK_ALL = [Rule(permission="*", pattern="*", action="ask")]


def _saved(permission: str, patterns: tuple[str, ...]) -> list[Rule]:
    return [Rule(permission=permission, pattern=p, action="allow") for p in patterns]


def _plan(ws: Path, command: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    plan = plan_permissions(
        command, workdir=str(ws), boundary=WorkspaceBoundary((ws,)), home=str(ws), env={}
    )
    return plan.patterns, plan.always


# --- words the model supplies are literal in what "always" saves ------------------------------


@pytest.mark.parametrize(
    ("approved", "saved", "later"),
    [
        ("git 'c*' --help", "git c[*] *", "git clean -fdx"),  # the reported case
        ("git 'c?' x", "git c[?] *", "git cl x"),
        ("git 'c[ab]' x", "git c[[]ab] *", "git ca x"),
        ("'r*' x", "r[*] *", "rm -rf x"),
        ("sudo 'r*' x", "r[*] *", "rm x"),
        ("npm run 'd*'", "npm run d[*] *", "npm run deploy"),
        ("git -C . 'p*' x", "git p[*] *", "git push origin"),
    ],
)
def test_always_on_a_wildcard_word_saves_it_literally(
    tmp_path: Path, approved: str, saved: str, later: str
) -> None:
    _patterns, always = _plan(tmp_path, approved)
    assert saved in always
    assert all("*" not in p.removesuffix(" *").replace("[*]", "") for p in always)
    # what was approved is allowed again; what the wildcard would have covered is asked
    patterns, _ = _plan(tmp_path, approved)
    assert decide("bash", patterns, ASK_ALL, _saved("bash", always)).action == "allow"
    later_patterns, _ = _plan(tmp_path, later)
    assert decide("bash", later_patterns, ASK_ALL, _saved("bash", always)).action == "ask"


def test_an_assignments_value_is_literal_too(tmp_path: Path) -> None:
    _patterns, always = _plan(tmp_path, "FOO='*' make")
    assert "FOO=[*] make *" in always
    other, _ = _plan(tmp_path, "FOO=evil make")
    written = [p for p in other if p.startswith("FOO=")]
    assert decide("bash", written, ASK_ALL, _saved("bash", always)).action == "ask"


def test_a_line_that_cannot_be_judged_saves_nothing(tmp_path: Path) -> None:
    _patterns, always = _plan(tmp_path, "rm * ;(")
    assert always == ()
    request = PermissionRequest(
        permission="bash", patterns=("rm * ;(",), always=("rm * ;(",), unjudged=("rm * ;(",)
    )
    assert request.saves == ()
    kinds = [o.kind for o in options_for(request)]
    assert kinds == ["allow_once", "reject_once"]  # nothing to save, nothing offered


@pytest.mark.parametrize(
    ("text", "matches", "misses"),
    [
        ("get*", "get*", "get_secrets_and_delete"),
        ("a?c", "a?c", "abc"),
        ("x[1]", "x[1]", "x1"),
        ("[*]", "[*]", "*"),
    ],
)
def test_the_matcher_honours_the_escapes(text: str, matches: str, misses: str) -> None:
    assert wildcard_match(matches, literal(text))
    assert not wildcard_match(misses, literal(text))
    assert wildcard_match("git status -s", "git status *")  # wildcards still work


def test_always_on_an_mcp_tool_named_with_a_wildcard_covers_only_it() -> None:
    saved = _saved("mcp", (literal("srv:get*"),))
    assert decide("mcp", ["srv:get*"], ASK_ALL, saved).action == "allow"
    assert decide("mcp", ["srv:get_secrets_and_delete"], ASK_ALL, saved).action == "ask"


# --- outside the workspace: the file or folder asked for, nothing below it ------------------


async def test_always_on_one_outside_file_saves_that_file_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    (home / "notes.txt").write_text("notes\n")
    ask = RecordingAsk(lambda request: deny())
    await ReadTool().run(ReadParams(file_path=str(home / "notes.txt")), tool_context(ws, ask=ask))
    (request,) = ask.requests
    assert request.permission == "external_directory"
    assert request.saves == (str(home / "notes.txt"),)
    saved = _saved("external_directory", request.saves)
    again = str(home / "notes.txt")
    assert decide("external_directory", [again], ASK_ALL, saved).action == "allow"
    for other in (home / ".profile", home / ".ssh" / "id_rsa", home):
        assert decide("external_directory", [str(other)], ASK_ALL, saved).action == "ask"


def test_always_on_a_commands_outside_folder_covers_no_subfolder(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    (outside / "deeper").mkdir(parents=True)
    boundary = WorkspaceBoundary((ws,))
    plan = plan_permissions(
        f"cat {outside}/a", workdir=str(ws), boundary=boundary, home=str(ws), env={}
    )
    (folder,) = plan.outside
    saved = _saved("external_directory", (literal(f"{folder}/*"),))
    assert decide("external_directory", [f"{folder}/*"], ASK_ALL, saved).action == "allow"
    deeper = f"{outside}/deeper/*"
    assert decide("external_directory", [deeper], ASK_ALL, saved).action == "ask"


# --- every prompt names what "session"/"always" save -----------------------------------------


def _ask(request: PermissionRequest) -> PermissionAsk:
    return PermissionAsk(
        session_id="ses_1",
        tool_call_id="t1",
        mode="build",
        request=request,
        options=options_for(request),
    )


GIT = PermissionRequest(
    permission="bash",
    patterns=("git c* --help",),
    always=("git c[*] *",),
    title="Run: git 'c*' --help",
    subject=CommandSubject(command="git 'c*' --help", cwd="/ws"),
)


def test_the_options_name_the_exact_patterns_saved() -> None:
    names = {o.kind: o.name for o in options_for(GIT)}
    assert names["allow_session"] == "Allow for this session: bash git c[*] *"
    assert names["allow_always"] == "Always allow in this project: bash git c[*] *"


def test_the_terminal_prompt_names_the_exact_patterns_saved() -> None:
    lines = render_ask(_ask(GIT))
    assert "  [s]ession / [a]lways save: bash git c[*] *" in lines


def test_acp_offers_one_option_per_kind_and_always_means_this_session() -> None:
    request = permission_request(_ask(GIT), session_id="ses_1")
    kinds = [o.kind for o in request.options]
    assert sorted(kinds) == sorted(set(kinds))  # at most one option of each kind
    (always,) = [o for o in request.options if o.kind == "allow_always"]
    assert always.name == "Always allow in this session: bash git c[*] *"
    assert always.field_meta == {"lspAgent": {"scope": "session"}}
    assert not any("project" in o.name for o in request.options)


# --- saved approvals belong to the project: list, revoke, sessions delete ---------------------


async def _seed(folder: str) -> tuple[str, str]:
    """Two sessions of ``folder``: one answered "always" (``bash git c[*] *``), one "for this
    session" (``edit *``); their ids."""
    store = await open_data_store(os.environ)
    now = datetime.now(UTC).isoformat()
    try:
        ids = []
        for index, (kind, permission, pattern) in enumerate(
            [("allow_always", "bash", "git c[*] *"), ("allow_session", "edit", "*")]
        ):
            sid = f"ses_seed{index}"
            created = {
                "sessionId": sid,
                "workspaceFolder": folder,
                "model": "anthropic/claude-test",
                "mode": "build",
            }
            resolved = {
                "toolCallId": "t1",
                "messageId": "m1",
                "permission": permission,
                "state": "allowed",
                "optionKind": kind,
                "always": [pattern],
            }
            await store.append(
                sid,
                [
                    NewEvent(type="session_created", data=created, time=now),
                    NewEvent(type="permission_resolved", data=resolved, time=now),
                ],
            )
            ids.append(sid)
        return ids[0], ids[1]
    finally:
        await store.close()


async def _rules_of(session_id: str) -> list[tuple[str, str]]:
    store = await open_data_store(os.environ)
    try:
        return [(r.permission, r.pattern) for r in await store.approvals(session_id)]
    finally:
        await store.close()


def _list(ws: Path) -> list[dict[str, str]]:
    result = run_cli("permissions", "list", "--json", cwd=ws)
    assert result.returncode == 0, result.stderr
    approvals: list[dict[str, str]] = json.loads(result.stdout)["approvals"]
    return approvals


def test_permissions_list_and_revoke_and_sessions_delete(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    folder = Path(os.path.realpath(ws)).as_uri()
    always_sid, session_sid = asyncio.run(_seed(folder))

    listed = _list(ws)
    assert [(a["scope"], a["permission"], a["pattern"]) for a in listed] == [
        ("project", "bash", "git c[*] *"),
        ("session", "edit", "*"),
    ]
    text = run_cli("permissions", "list", cwd=ws)
    assert f"project  bash  git c[*] *\nsession {session_sid}  edit  *\n" == text.stdout

    # deleting the session that gave "always" keeps the project's approval; the other
    # session's own approval goes with it
    for sid in (always_sid, session_sid):
        deleted = run_cli("sessions", "delete", sid, cwd=ws)
        assert deleted.returncode == 0, deleted.stderr
    assert [(a["scope"], a["pattern"]) for a in _list(ws)] == [("project", "git c[*] *")]

    # a new session of the project is still allowed by it, until it is revoked
    other, _ = asyncio.run(_seed(folder))
    assert ("bash", "git c[*] *") in asyncio.run(_rules_of(other))
    revoked = run_cli("permissions", "revoke", "bash", "git c[*] *", cwd=ws)
    assert revoked.returncode == 0, revoked.stderr
    assert "revoked: bash git c[*] *" in revoked.stdout
    assert ("bash", "git c[*] *") not in asyncio.run(_rules_of(other))
    again = run_cli("permissions", "revoke", "bash", "git c[*] *", cwd=ws)
    assert again.returncode == 2
    assert "no saved approval" in again.stderr


async def _rebuild() -> None:
    store = await open_data_store(os.environ)
    try:
        await store.rebuild_projections()
    finally:
        await store.close()


def test_a_revoked_approval_stays_revoked_when_the_log_is_replayed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    folder = Path(os.path.realpath(ws)).as_uri()
    always_sid, session_sid = asyncio.run(_seed(folder))
    assert run_cli("permissions", "revoke", "bash", "git c[*] *", cwd=ws).returncode == 0
    revoke_session = run_cli("permissions", "revoke", "edit", "*", "--session", session_sid, cwd=ws)
    assert revoke_session.returncode == 0, revoke_session.stderr
    asyncio.run(_rebuild())
    assert _list(ws) == []
    assert asyncio.run(_rules_of(always_sid)) == []
