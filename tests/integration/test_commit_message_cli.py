"""``lsp-agent commit-message`` on real git repositories: the message follows the history's
style (Conventional Commits enforced, one retry), stdout holds only the message, nothing
staged is a clear error, and nothing the repository configures ever runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm
from tests.support.git_history import commit_history, git
from tests.support.model_requests import last_user_text
from tests.support.provider_env import provider_env

KEY = "sk-commit-message-SECRET-1234"
MODEL = ("--model", "anthropic/claude-test")
CONVENTIONAL_HISTORY = [
    "feat(parser): read empty files",
    "fix: keep the trailing newline",
    "docs(readme): say how to install",
    "refactor(cli)!: drop the old flags",
    "chore: bump the version",
]


def repository(root: Path, subjects: list[str]) -> Path:
    repo = root / "repo"
    repo.mkdir()
    commit_history(repo, subjects)
    return repo


def stage_a_change(repo: Path) -> None:
    (repo / "greet.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    git(repo, "add", "greet.py")


def side_script(*answers: str) -> dict[str, Any]:
    """Every request (the commit message is a side request: no tools) takes the next answer."""
    return {"side_requests_use_script": True, "turns": [{"text": a} for a in answers]}


def user_text(server: FakeLLMServer, index: int) -> str:
    """The first user message of request ``index`` (a retry adds the model's answer and
    what was wrong after it)."""
    body = server.requests[index].body
    return "\n".join(
        last_user_text({"messages": [m]}) for m in body["messages"] if m["role"] == "user"
    )


def test_a_conventional_history_gets_a_conventional_message_on_stdout_only(
    tmp_path: Path,
) -> None:
    repo = repository(tmp_path, CONVENTIONAL_HISTORY)
    stage_a_change(repo)
    script = side_script("feat(greet): add a greeting helper")
    with running_fake_llm(script) as server:
        result = run_cli("commit-message", *MODEL, cwd=repo, env=provider_env(server, KEY))
        asked = user_text(server, 0)
        requests = len(server.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "feat(greet): add a greeting helper\n"
    assert requests == 1
    assert "Conventional Commits" in asked
    assert "refactor(cli)!: drop the old flags" in asked  # the recent subjects
    assert "+def greet(name):" in asked  # the staged diff
    assert "A\tgreet.py" in asked


def test_an_answer_that_breaks_the_convention_is_asked_again_with_the_error(
    tmp_path: Path,
) -> None:
    repo = repository(tmp_path, CONVENTIONAL_HISTORY)
    stage_a_change(repo)
    script = side_script("Added a greeting helper", "```\nfeat: add a greeting helper\n```")
    with running_fake_llm(script) as server:
        result = run_cli("commit-message", *MODEL, cwd=repo, env=provider_env(server, KEY))
        second = user_text(server, 1)
        requests = len(server.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "feat: add a greeting helper\n"
    assert requests == 2
    assert "'Added a greeting helper' is not a Conventional Commit" in second


def test_two_answers_that_break_the_convention_are_refused(tmp_path: Path) -> None:
    repo = repository(tmp_path, CONVENTIONAL_HISTORY)
    stage_a_change(repo)
    script = side_script("Added a greeting helper", "Greeting helper")
    with running_fake_llm(script) as server:
        result = run_cli("commit-message", *MODEL, cwd=repo, env=provider_env(server, KEY))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "not a Conventional Commit" in result.stderr


def test_a_plain_history_is_mirrored_not_forced_into_conventional_commits(
    tmp_path: Path,
) -> None:
    plain = ["Issue 3: add the parser", "Issue 2: fix the reader", "Issue 1: start"]
    repo = repository(tmp_path, plain)
    stage_a_change(repo)
    script = side_script("Issue 4: add a greeting helper\n\nSays hello to a name.")
    with running_fake_llm(script) as server:
        result = run_cli("commit-message", *MODEL, cwd=repo, env=provider_env(server, KEY))
        asked = user_text(server, 0)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Issue 4: add a greeting helper\n\nSays hello to a name.\n"
    assert "Conventional Commits" not in asked
    assert "- Issue 3: add the parser" in asked
    assert "starting with a capital letter" in asked


def test_nothing_staged_is_a_clear_error_and_asks_no_model(tmp_path: Path) -> None:
    repo = repository(tmp_path, CONVENTIONAL_HISTORY)
    (repo / "unstaged.txt").write_text("not added\n")
    with running_fake_llm(side_script("feat: x")) as server:
        result = run_cli("commit-message", *MODEL, cwd=repo, env=provider_env(server, KEY))
        requests = len(server.requests)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == "nothing staged"
    assert requests == 0


def test_outside_a_repository_it_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    result = run_cli("commit-message", *MODEL, cwd=folder)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "not a git repository" in result.stderr


def test_nothing_the_repository_configures_runs(tmp_path: Path) -> None:
    """Hooks, a pager, an external diff, a textconv driver, an fsmonitor and aliases all
    name a program that would leave a mark; none runs."""
    repo = repository(tmp_path, CONVENTIONAL_HISTORY)
    mark = tmp_path / "ran"
    program = tmp_path / "evil.sh"
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {mark}\ncat\n')
    program.chmod(0o755)
    hooks = repo / ".git" / "hooks"
    for hook in ("pre-commit", "post-index-change", "reference-transaction", "post-checkout"):
        (hooks / hook).write_text(program.read_text())
        (hooks / hook).chmod(0o755)
    for key, value in (
        ("core.pager", str(program)),
        ("pager.diff", str(program)),
        ("pager.log", str(program)),
        ("diff.external", str(program)),
        ("diff.evil.textconv", str(program)),
        ("diff.evil.command", str(program)),
        ("core.fsmonitor", str(program)),
        ("alias.diff", f"!{program}"),
        ("alias.log", f"!{program}"),
    ):
        git(repo, "config", key, value)
    (repo / ".gitattributes").write_text("*.py diff=evil\n")
    stage_a_change(repo)
    git(repo, "add", ".gitattributes")
    mark.unlink(missing_ok=True)  # the test's own git calls may have left one
    with running_fake_llm(side_script("feat(greet): add a greeting helper")) as server:
        result = run_cli("commit-message", *MODEL, cwd=repo, env=provider_env(server, KEY))
        asked = user_text(server, 0)
    assert result.returncode == 0, result.stderr
    assert not mark.exists(), mark.read_text()
    assert "+def greet(name):" in asked  # the real diff, not a driver's rendering
