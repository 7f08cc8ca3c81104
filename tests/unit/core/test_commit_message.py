"""The commit message's style rules: when the history makes Conventional Commits a must,
what a model's answer is cleaned of, and what is refused."""

from __future__ import annotations

from lsp_agent.core.commit_message import check_message, clean_answer, commit_style


def test_most_conventional_subjects_make_the_convention_a_must() -> None:
    style = commit_style(["feat: a", "fix(x): b", "Update readme", "chore!: c"])
    assert style.conventional
    assert check_message("docs(readme): say more", style) is None
    assert check_message("perf!: faster", style) is None
    problem = check_message("Say more in the readme", style)
    assert problem is not None
    assert "not a Conventional Commit" in problem


def test_a_mixed_or_plain_history_does_not() -> None:
    style = commit_style(["feat: A", "Update readme", "Fix the reader", "fix: b"])
    assert not style.conventional
    assert style.capitalised
    assert check_message("Add a parser", style) is None
    assert not commit_style([]).conventional


def test_only_the_recent_twenty_subjects_count() -> None:
    style = commit_style(["Plain subject"] * 20 + ["feat: old"] * 40)
    assert not style.conventional


def test_a_body_needs_a_blank_line_and_an_empty_answer_is_refused() -> None:
    style = commit_style([])
    assert check_message("Subject\nbody right away", style) is not None
    assert check_message("Subject\n\nA body.", style) is None
    assert check_message("", style) == "the message is empty"


def test_fences_and_quotes_are_taken_off() -> None:
    assert clean_answer("```text\nfeat: x\n\nbody  \n```") == "feat: x\n\nbody"
    assert clean_answer('"fix: y"') == "fix: y"
    assert clean_answer("  chore: z \n\n") == "chore: z"
