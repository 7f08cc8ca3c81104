"""Finding 1: instruction files read for the model's context go through the read tool's wall.

Links out of the workspace (to ``/proc/self/environ``, to a private key), FIFOs, oversize
files and the agent's own key inside a file: none reaches the model, the database or an
export; the turn goes on with a note instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.context_sources import MAX_INSTRUCTIONS_BYTES, FileContextSources
from lsp_agent.core.context import SourcesSnapshot
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm

KEY = "sk-ant-context-wall-0123456789abcdef"
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAprivate\n"
MARKER = "b3BlbnNzaC1rZXktdjEAAAAAprivate"
RUN_TIMEOUT = 120.0
HANG_TIMEOUT = 30.0


@pytest.fixture
def private_key(isolated_home: Path) -> Path:
    ssh = isolated_home / ".ssh"
    ssh.mkdir(exist_ok=True)
    key = ssh / "id_rsa"
    key.write_text(PRIVATE_KEY)
    return key


def run(server: FakeLLMServer, cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
    result = run_cli(
        "run", "--yes", *extra, "--model", "anthropic/claude-test", "hello",
        cwd=cwd, env=env, timeout=RUN_TIMEOUT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result


def everything_stored(cwd: Path, data_dir: Path) -> str:
    """The raw database files and both export formats of every session, as one text."""
    listing = json.loads(run_cli("sessions", "list", "--json", cwd=cwd).stdout)
    texts = []
    for session in listing["sessions"]:
        for fmt in ("markdown", "json"):
            exported = run_cli("sessions", "export", "--format", fmt, session["sessionId"], cwd=cwd)
            assert exported.returncode == 0, exported.stderr
            texts.append(exported.stdout)
    for path in data_dir.glob("lsp-agent.db*"):
        texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


def system_text(body: dict[str, Any]) -> str:
    return json.dumps(body["system"])


# -- end to end: a real `lsp-agent run` ------------------------------------------------------


def test_agents_md_linked_to_the_process_environment_leaks_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "AGENTS.md").symlink_to("/proc/self/environ")
    with running_fake_llm([{"text": "done"}]) as server:
        run(server, workspace)
        bodies = [json.dumps(r.body) for r in server.requests]
        system = system_text(server.model_bodies()[0])
    assert bodies
    assert all(KEY not in body for body in bodies)
    assert "did not read this file" in system  # the model is told, the turn went on
    assert "/proc" not in system  # ...without naming the target
    assert KEY not in everything_stored(workspace, tmp_path / "data")


def test_claude_md_linked_to_a_private_key_is_not_sent(
    workspace: Path, private_key: Path, tmp_path: Path
) -> None:
    (workspace / "CLAUDE.md").symlink_to(private_key)
    with running_fake_llm([{"text": "done"}]) as server:
        run(server, workspace)
        bodies = [json.dumps(r.body) for r in server.requests]
    assert all(MARKER not in body for body in bodies)
    stored = [p.read_bytes() for p in (tmp_path / "data").glob("lsp-agent.db*")]
    assert all(MARKER.encode() not in data for data in stored)


def test_a_fifo_named_agents_md_does_not_hang_the_run(workspace: Path) -> None:
    os.mkfifo(workspace / "AGENTS.md")
    with running_fake_llm([{"text": "done"}]) as server:
        run(server, workspace)  # bounded by RUN_TIMEOUT: a hang is a failure
        system = system_text(server.model_bodies()[0])
    assert "FIFO" in system


def test_a_link_the_model_makes_mid_session_is_refused_in_the_next_note(
    workspace: Path, tmp_path: Path, config_dir: Path
) -> None:
    # The user lets commands reach outside, so the bash wall does not stop the link itself:
    # what is tested is that the context note never carries the target. (A link to a
    # credential store such as ~/.ssh is refused by bash itself: test_credentials.py.)
    allow = {"permission": {"bash": "allow", "external_directory": "allow"}}
    (config_dir / "config.json").write_text(json.dumps(allow))
    (workspace / "AGENTS.md").write_text("Be brief.\n")
    secret = tmp_path / "elsewhere" / "key.pem"
    secret.parent.mkdir()
    secret.write_text(PRIVATE_KEY)
    make_link = f"rm AGENTS.md && ln -s {secret} AGENTS.md"
    script = [
        {"tool_calls": [{"name": "bash", "input": {"command": make_link, "description": "x"}}]},
        {"text": "done"},
    ]
    with running_fake_llm(script) as server:
        run(server, workspace)
        first, second = server.model_bodies()
    assert (workspace / "AGENTS.md").is_symlink()  # the model really made the link
    assert "Be brief." in system_text(first)
    later = json.dumps(second["messages"])
    assert MARKER not in later
    assert "did not read this file" in later  # the change arrived as a note


def test_untrusted_project_instructions_through_a_link_are_not_read(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(f"{MARKER}\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "rules.md").symlink_to(outside)
    (workspace / ".lsp-agent.json").write_text(json.dumps({"instructions": ["docs/rules.md"]}))
    with running_fake_llm([{"text": "done"}]) as server:
        run(server, workspace)
        body = json.dumps(server.model_bodies()[0])
    assert MARKER not in body
    assert "did not read this file" in body


@pytest.mark.parametrize("entry", ["../outside.md", "ABSOLUTE"])
def test_untrusted_project_instructions_outside_are_refused(
    workspace: Path, tmp_path: Path, entry: str
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(f"{MARKER}\n")
    named = str(outside) if entry == "ABSOLUTE" else entry
    (workspace / ".lsp-agent.json").write_text(json.dumps({"instructions": [named]}))
    with running_fake_llm([{"text": "done"}]) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        result = run_cli("run", "hello", cwd=workspace, env=env, timeout=RUN_TIMEOUT)
        sent = [json.dumps(r.body) for r in server.requests]
    assert result.returncode == 2
    assert "instructions.0" in result.stderr
    assert all(MARKER not in body for body in sent)


# -- the sources themselves ------------------------------------------------------------------


async def collect(
    workspace: Path,
    config_dir: Path,
    configured: tuple[str, ...] = (),
    secrets: SecretFilter | None = None,
) -> SourcesSnapshot:
    if secrets is None:  # (the keyword is new: without it the test runs on older code)
        sources = FileContextSources(user_config_dir=config_dir, configured=configured)
    else:
        sources = FileContextSources(
            user_config_dir=config_dir, configured=configured, secrets=secrets
        )
    return await sources.collect([str(workspace)], full=False)


def texts(snapshot: SourcesSnapshot) -> dict[str, str | None]:
    return {Path(s.path).name: s.text for s in snapshot.instructions}


@pytest.fixture
def config_dir(isolated_home: Path) -> Path:
    folder = isolated_home / ".config" / "lsp-agent"
    folder.mkdir(parents=True)
    return folder


async def test_a_link_inside_the_workspace_is_still_followed(
    workspace: Path, config_dir: Path
) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "agents.md").write_text("Use tabs.\n")
    (workspace / "AGENTS.md").symlink_to("docs/agents.md")
    assert texts(await collect(workspace, config_dir))["AGENTS.md"] == "Use tabs.\n"


@pytest.mark.parametrize("target", ["/proc/self/environ", "/etc/passwd", "HOME_FILE", "DANGLING"])
async def test_project_links_out_of_the_workspace_become_notes(
    workspace: Path, config_dir: Path, isolated_home: Path, target: str
) -> None:
    if target == "HOME_FILE":
        (isolated_home / "secret.txt").write_text(MARKER)
        target = str(isolated_home / "secret.txt")
    elif target == "DANGLING":
        target = str(isolated_home / "not-there.md")
    (workspace / "AGENTS.md").symlink_to(target)
    snapshot = await collect(workspace, config_dir)
    (source,) = snapshot.instructions
    assert source.error is None  # a refusal never blocks the turn
    assert source.text is not None
    assert "did not read this file" in source.text
    assert target not in source.text


async def test_a_folder_through_an_intermediate_link_is_refused(
    workspace: Path, config_dir: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "rules.md").write_text(MARKER)
    (workspace / "linked").symlink_to(elsewhere, target_is_directory=True)
    snapshot = await collect(workspace, config_dir, configured=("linked/rules.md",))
    assert MARKER not in json.dumps(texts(snapshot))


@pytest.mark.parametrize("kind", ["fifo", "folder", "socket"])
async def test_special_files_are_skipped_with_a_note(
    workspace: Path, config_dir: Path, kind: str
) -> None:
    import socket

    path = workspace / "AGENTS.md"
    holder: socket.socket | None = None
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        holder = socket.socket(socket.AF_UNIX)
        holder.bind(str(path))
    try:
        snapshot = await asyncio.wait_for(collect(workspace, config_dir), HANG_TIMEOUT)
    except TimeoutError:
        if kind == "fifo":  # let the blocked reader go, so the test can end
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        raise AssertionError(f"reading a {kind} named AGENTS.md hung") from None
    finally:
        if holder is not None:
            holder.close()
    (source,) = snapshot.instructions
    assert source.text is not None
    assert "not a regular file" in source.text


async def test_the_global_file_must_stay_in_the_config_folder(
    workspace: Path, config_dir: Path, private_key: Path
) -> None:
    (config_dir / "AGENTS.md").symlink_to(private_key)
    snapshot = await collect(workspace, config_dir)
    assert MARKER not in json.dumps(texts(snapshot))
    assert "did not read this file" in str(texts(snapshot)["AGENTS.md"])


async def test_a_global_file_inside_the_config_folder_is_read(
    workspace: Path, config_dir: Path
) -> None:
    (config_dir / "shared").mkdir()
    (config_dir / "shared" / "mine.md").write_text("Prefer pathlib.\n")
    (config_dir / "AGENTS.md").symlink_to(config_dir / "shared" / "mine.md")
    assert texts(await collect(workspace, config_dir))["AGENTS.md"] == "Prefer pathlib.\n"


async def test_configured_absolute_entries_may_name_only_the_workspace_or_config_folder(
    workspace: Path, config_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(MARKER)
    (config_dir / "team.md").write_text("Team rules.\n")
    configured = (str(outside), str(config_dir / "team.md"))
    found = texts(await collect(workspace, config_dir, configured=configured))
    assert MARKER not in json.dumps(found)
    assert found["team.md"] == "Team rules.\n"


async def test_a_relative_entry_cannot_reach_the_config_folder_through_a_link(
    workspace: Path, config_dir: Path
) -> None:
    (config_dir / "config.json").write_text('{"note": "' + MARKER + '"}')
    (workspace / "cfg.md").symlink_to(config_dir / "config.json")
    found = texts(await collect(workspace, config_dir, configured=("cfg.md",)))
    assert MARKER not in json.dumps(found)


async def test_instruction_text_is_bounded(workspace: Path, config_dir: Path) -> None:
    (workspace / "AGENTS.md").write_text("x" * (MAX_INSTRUCTIONS_BYTES * 4))
    text = texts(await collect(workspace, config_dir))["AGENTS.md"]
    assert text is not None
    assert len(text) < MAX_INSTRUCTIONS_BYTES + 200
    assert "only its beginning is shown" in text


async def test_the_secret_filter_runs_over_instruction_files(
    workspace: Path, config_dir: Path
) -> None:
    (workspace / "AGENTS.md").write_text(f"The key is {KEY}.\n")
    secrets = SecretFilter({"ANTHROPIC_API_KEY": KEY})
    text = texts(await collect(workspace, config_dir, secrets=secrets))["AGENTS.md"]
    assert text is not None
    assert KEY not in text
    assert "[redacted:ANTHROPIC_API_KEY]" in text
    assert "lsp-agent masked 1 secret" in text  # the model is told, as for tool output


async def test_a_binary_file_is_not_shown(workspace: Path, config_dir: Path) -> None:
    (workspace / "AGENTS.md").write_bytes(b"A=1\0B=2\0")
    text = texts(await collect(workspace, config_dir))["AGENTS.md"]
    assert text is not None
    assert "B=2" not in text


async def test_a_skill_file_that_is_a_fifo_is_a_problem_not_a_hang(workspace: Path) -> None:
    from lsp_agent.skills.catalog import SkillProblem, read_skill_file

    fifo = workspace / "SKILL.md"
    os.mkfifo(fifo)
    try:
        read = await asyncio.wait_for(asyncio.to_thread(read_skill_file, str(fifo)), HANG_TIMEOUT)
    except TimeoutError:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # let the blocked reader go
        raise AssertionError("reading a FIFO named SKILL.md hung") from None
    assert isinstance(read, SkillProblem)
    assert "not a regular file" in read.reason
