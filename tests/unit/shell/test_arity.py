"""The arity table: which leading words an "always allow" answer keeps."""

from __future__ import annotations

import pytest

from lsp_agent.shell.arity import ARITY, always_pattern, command_prefix


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("git log --oneline", "git log *"),
        ("git log", "git log *"),
        ("ls -la", "ls *"),
        ("ls", "ls *"),
        ("npm run dev", "npm run dev *"),
        ("npm run dev -- --port 3000", "npm run dev *"),
        ("npm install left-pad", "npm install *"),
        ("docker compose up -d", "docker compose up *"),
        ("docker ps -a", "docker ps *"),
        ("python -m pytest -x tests", "python -m pytest *"),
        ("python script.py", "python *"),
        ("cargo test --release", "cargo test *"),
        ("git stash pop", "git stash pop *"),
        ("unknowntool sub --flag", "unknowntool *"),
    ],
)
def test_always_patterns(words: str, expected: str) -> None:
    assert always_pattern(words.split()) == expected


def test_the_longest_known_prefix_wins() -> None:
    assert ARITY["npm"] == 2
    assert ARITY["npm run"] == 3
    assert command_prefix(["npm", "run", "build", "--watch"]) == ("npm", "run", "build")
    assert command_prefix(["npm", "test", "--watch"]) == ("npm", "test")


def test_a_command_shorter_than_its_arity_keeps_all_its_words() -> None:
    assert command_prefix(["npm", "run"]) == ("npm", "run")
    assert command_prefix(["git"]) == ("git",)


def test_no_words_give_no_prefix() -> None:
    assert command_prefix([]) == ()
