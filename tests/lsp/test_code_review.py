"""The agent's review of the person's changes over LSP (issue 37 §1): a real git repository
with a planted bug, the fake model scripted to report it through ``report_finding``; the
finding arrives as a diagnostic any LSP client shows, its code actions fix or dismiss it, and
a rerun replaces the set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.hostile_repo import git
from tests.support.lsp_client import AgentClient, agent_client
from tests.support.waiting import wait_until

GOOD = "def mean(values):\n    total = sum(values)\n    return total / len(values)\n"
PLANTED = "def mean(values):\n    total = sum(values)\n    return total / (len(values) - 1)\n"


def repository(ws: Path) -> Path:
    """``ws`` as a repository whose ``stats.py`` is committed, then changed with a bug."""
    path = ws / "stats.py"
    path.write_text(GOOD)
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    path.write_text(PLANTED)
    return path


def finding(line: int, message: str, **extra: Any) -> dict[str, Any]:
    call = {"path": "stats.py", "line": line, "severity": "error", "message": message, **extra}
    return {"tool_calls": [{"name": "report_finding", "input": call}]}


def _forwarded(diagnostic: lsp.Diagnostic) -> dict[str, Any]:
    """``diagnostic`` as an ``agent/diagnostics`` item carries it."""
    start, end = diagnostic.range.start, diagnostic.range.end
    return {
        "range": {
            "start": {"line": start.line, "character": start.character},
            "end": {"line": end.line, "character": end.character},
        },
        "message": diagnostic.message,
        "severity": 1,
        "source": diagnostic.source,
        "code": diagnostic.code,
    }


def published(client: AgentClient, path: Path) -> list[lsp.Diagnostic]:
    return list(client.client.diagnostics.get(path.as_uri(), []))


async def test_a_review_publishes_its_finding_and_its_actions_fix_or_dismiss_it(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = repository(workspace)
    off_by_one = "Divides by len - 1: the mean of [2, 4] is 6, and one value divides by zero."
    fake_llm.set_script(
        {
            "turns": [
                finding(3, off_by_one, related=[{"path": "stats.py", "line": 2, "message": "sum"}]),
                {"text": "One bug: the divisor."},
                # the fix's turn: the model reads the file's diagnostics first
                {"tool_calls": [{"name": "diagnostics", "input": {"file_path": str(path)}}]},
                {"text": "Fixed it."},
                finding(1, "mean of an empty list raises ZeroDivisionError", severity="warning"),
                {"text": "Only an edge case left."},
            ]
        }
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        result = await client.request("agent/codeReview/run", {}, timeout=60)

        assert result["summary"] == "One bug: the divisor."
        [reported] = result["findings"]
        assert reported["uri"] == path.as_uri()
        assert reported["range"]["start"] == {"line": 2, "character": 0}
        assert reported["severity"] == 1
        await wait_until(lambda: published(client, path))
        [diagnostic] = published(client, path)
        assert diagnostic.range.start.line == 2
        assert diagnostic.source == "lsp-agent"
        assert diagnostic.code == "review"
        assert diagnostic.message == off_by_one
        assert diagnostic.severity == lsp.DiagnosticSeverity.Error
        assert diagnostic.data == {"findingId": reported["id"]}
        [related] = diagnostic.related_information or []
        assert related.location.range.start.line == 1

        # The model reviewed the real diff, read-only: only its two review tools.
        body = fake_llm.model_bodies()[0]
        assert "-    return total / len(values)" in str(body["messages"])
        assert "+    return total / (len(values) - 1)" in str(body["messages"])
        assert sorted(tool["name"] for tool in body["tools"]) == ["read_file", "report_finding"]

        # A front-end forwards every diagnostic it shows, ours too: the model's diagnostics
        # are the language servers', never the review's own findings.
        client.publish_diagnostics(path.as_uri(), [_forwarded(diagnostic)])

        # Its code actions: "Fix with agent" starts a prompt naming the finding.
        actions = await client.code_actions(path, diagnostic.range, diagnostics=[diagnostic])
        assert actions is not None
        by_title = {a.title: a for a in actions if isinstance(a, lsp.CodeAction)}
        assert "Ask agent to fix: " + off_by_one[:20] not in " ".join(by_title)
        fix, dismiss = by_title["Fix with agent"], by_title["Dismiss"]
        assert fix.command is not None
        assert dismiss.command is not None
        started = await client.execute(fix.command.command, fix.command.arguments[0])
        end = await client.wait_idle(started["sessionId"])
        assert end["stopReason"] == "end_turn"
        prompt = str(fake_llm.model_bodies()[2]["messages"])
        assert off_by_one in prompt
        assert "stats.py (line 3)" in prompt
        read = str(fake_llm.model_bodies()[3]["messages"][-1])
        assert "No problems reported in stats.py." in read

        # A rerun replaces the set: the old finding is gone, the new one is there.
        rerun = await client.request("agent/codeReview/run", {}, timeout=60)
        [second] = rerun["findings"]
        await wait_until(
            lambda: [d.message for d in published(client, path)] == [second["message"]]
        )
        assert published(client, path)[0].range.start.line == 0
        assert published(client, path)[0].severity == lsp.DiagnosticSeverity.Warning
        stale = await client.code_actions(path, diagnostic.range, diagnostics=[diagnostic])
        assert not [a for a in stale or [] if a.title in ("Fix with agent", "Dismiss")]

        # Dismiss removes that diagnostic (a plain request at its line finds it too).
        line = lsp.Range(
            start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)
        )
        actions = await client.code_actions(path, line)
        dismiss = next(a for a in actions or [] if a.title == "Dismiss")
        assert isinstance(dismiss, lsp.CodeAction)
        assert dismiss.command is not None
        await client.execute(dismiss.command.command, dismiss.command.arguments[0])
        await wait_until(lambda: published(client, path) == [])


async def test_a_staged_review_sees_only_the_index_and_nothing_to_review_says_so(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = repository(workspace)
    fake_llm.set_script({"turns": [{"text": "Looks right."}]})
    async with agent_client(env=server_env, folders=[workspace]) as client:
        nothing = await client.request("agent/codeReview/run", {"staged": True}, timeout=60)
        assert nothing == {"findings": [], "summary": "No changes to review (the staged changes)."}
        assert fake_llm.model_bodies() == []  # no model call for an empty diff

        git(workspace, "add", "stats.py")
        path.write_text(PLANTED + "# not staged\n")
        staged = await client.request("agent/codeReview/run", {"staged": True}, timeout=60)
        assert staged == {"findings": [], "summary": "Looks right."}
        sent = str(fake_llm.model_bodies()[0]["messages"])
        assert "(len(values) - 1)" in sent
        assert "not staged" not in sent


async def test_a_review_outside_a_repository_or_of_an_unknown_base_is_an_error(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    async with agent_client(env=server_env, folders=[workspace]) as client:
        with pytest.raises(JsonRpcException, match="not in a git repository"):
            await client.request("agent/codeReview/run", {}, timeout=60)
        repository(workspace)
        with pytest.raises(JsonRpcException, match="no such revision: no-such-branch"):
            await client.request("agent/codeReview/run", {"base": "no-such-branch"}, timeout=60)
    assert fake_llm.model_bodies() == []


async def test_a_plain_lsp_client_runs_the_review_command_and_fixes_a_finding(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    """No extension at all: the command through ``workspace/executeCommand``, the finding as
    a standard diagnostic, the fix through the code action's command."""
    path = repository(workspace)
    message = "Divides by len - 1."
    fake_llm.set_script(
        {"turns": [finding(3, message), {"text": "One bug."}, {"text": "Fixed it."}]}
    )
    async with agent_client(env=server_env, folders=[workspace], plain=True) as client:
        result = await client.execute("lspAgent.review", {})
        assert [f["message"] for f in result["findings"]] == [message]
        await wait_until(lambda: published(client, path))
        [diagnostic] = published(client, path)
        assert (diagnostic.range.start.line, diagnostic.source) == (2, "lsp-agent")

        client.open(path, path.read_text())
        cursor = lsp.Range(
            start=lsp.Position(line=2, character=4), end=lsp.Position(line=2, character=4)
        )
        actions = await client.code_actions(path, cursor, diagnostics=[diagnostic])
        fix = next(a for a in actions or [] if a.title == "Fix with agent")
        assert isinstance(fix, lsp.CodeAction)
        assert fix.command is not None
        await client.execute(fix.command.command, fix.command.arguments[0])
        await wait_until(lambda: len(fake_llm.model_bodies()) >= 3, timeout=60)
    assert message in str(fake_llm.model_bodies()[2]["messages"])
