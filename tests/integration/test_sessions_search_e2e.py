"""``lsp-agent sessions search`` as a process: a word said only by a tool in an old session is
found, one from another workspace only with ``--all``, a word never said finds nothing, and a
query full of FTS syntax is searched for as words (issue 20, acceptance)."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm

KEY = "sk-sessions-search-SECRET-1"


def read_run(workspace: Path, file_name: str) -> str:
    """One turn in ``workspace`` whose only mention of the file's words is the read tool's
    output; answers the session id."""
    script = [
        {"tool_calls": [{"name": "read", "input": {"file_path": file_name}}]},
        {"text": "I read it."},
    ]
    with running_fake_llm(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        result = run_cli(
            "run", "--model", "anthropic/claude-test", "--yes", "look", cwd=workspace, env=env
        )
    assert result.returncode == 0, result.stderr
    listing = run_cli("sessions", "list", "--json", cwd=workspace)
    return str(json.loads(listing.stdout)["sessions"][0]["sessionId"])


def search(workspace: Path, *args: str) -> list[dict[str, str]]:
    result = run_cli("sessions", "search", *args, "--json", cwd=workspace)
    assert result.returncode == 0, result.stderr
    hits: list[dict[str, str]] = json.loads(result.stdout)["hits"]
    return hits


def test_sessions_search_finds_tool_output_of_old_sessions_and_other_workspaces_with_all(
    tmp_path: Path,
) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    (here / "notes.txt").write_text("the vault code is xylophonequartz\x1b[2K today\n")
    (here / "other.txt").write_text("nothing to see\n")
    (there / "far.txt").write_text("marmaladefjord lives over there\n")
    old = read_run(here, "notes.txt")
    read_run(here, "other.txt")  # a newer session: the first one is the old one
    far = read_run(there, "far.txt")

    (hit,) = search(here, "xylophonequartz")
    assert hit["sessionId"] == old
    assert hit["kind"] == "tool_output"
    assert "xylophonequartz" in hit["snippet"]
    assert set(hit) >= {"sessionId", "title", "messageId", "snippet", "updatedAt"}
    shown = run_cli("sessions", "show", old, "--json", cwd=here)
    messages = json.loads(shown.stdout)["messages"]
    assert hit["messageId"] in [m["messageId"] for m in messages]

    plain = run_cli("sessions", "search", "xylophone*", cwd=here)
    assert plain.returncode == 0, plain.stderr
    (line,) = plain.stdout.splitlines()
    assert line.startswith(f"{old}  {hit['messageId']}  ")
    assert "xylophonequartz" in line
    assert "\x1b" not in plain.stdout  # the tool's control characters are shown escaped

    assert search(here, "marmaladefjord") == []
    assert [h["sessionId"] for h in search(here, "marmaladefjord", "--all")] == [far]

    assert search(here, "neverwordzz") == []
    assert search(here, "neverwordzz", "--all") == []
    nothing = run_cli("sessions", "search", "neverwordzz", cwd=here)
    assert (nothing.returncode, nothing.stdout) == (0, "")
    assert "no matches" in nothing.stderr

    assert [h["sessionId"] for h in search(here, 'code: "vault code" (xylo* -is')] == [old]
    empty = run_cli("sessions", "search", '"*"', cwd=here)
    assert empty.returncode == 2
    assert "nothing to search for" in empty.stderr
    assert "Traceback" not in empty.stderr
