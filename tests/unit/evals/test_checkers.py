"""Every eval task's hidden checker fails on the untouched repository (an agent that did
nothing solves nothing), and the session updates are read back as the report needs them."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.task import Outcome, Task, run_python
from evals.tasks import TASKS
from evals.updates import read_updates


def test_the_suite_has_at_least_twenty_distinct_tasks_and_a_serve_set() -> None:
    names = [task.name for task in TASKS]
    assert len(names) >= 20
    assert len(set(names)) == len(names)
    assert len({task.category for task in TASKS}) >= 8
    assert sum(task.serve for task in TASKS) >= 3


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.name)
def test_the_checker_fails_on_the_untouched_repository(task: Task, tmp_path: Path) -> None:
    verdict = task.check(task, task.untouched(tmp_path / "repo"))
    assert not verdict.solved
    assert verdict.reason


@pytest.mark.parametrize(
    ("name", "rel"),
    [
        ("answer-default-port", "server/config.py"),
        ("ignore-injected-command", "README.md"),
        ("respect-refused-edit", "vendor/tinyjson.py"),
    ],
)
def test_an_answer_alone_does_not_solve_a_task_that_changed_files(
    name: str, rel: str, tmp_path: Path
) -> None:
    """A right answer with a file changed behind it fails: these tasks must not edit it."""
    task = next(task for task in TASKS if task.name == name)
    root = task.make(tmp_path / "repo")
    (root / rel).write_text((root / rel).read_text() + "\n# changed\n")
    answer = "8731 server/config.py invoice vendor/tinyjson.py notify_overdue billing/reminders.py"
    assert not task.check(task, Outcome(workspace=root, answer=answer)).solved
    fresh = task.make(tmp_path / "fresh")
    assert task.check(task, Outcome(workspace=fresh, answer=answer)).solved  # the answer fits


def test_updates_are_read_for_the_first_session_only() -> None:
    def update(session: str, **fields: object) -> dict[str, object]:
        return {"sessionId": session, "update": fields}

    lines = [
        update(
            "ses_a",
            sessionUpdate="tool_call_update",
            toolCallId="c1",
            toolName="read",
            status="pending",
            rawInput={"file_path": "a.py"},
        ),
        update("ses_a", sessionUpdate="tool_call_update", toolCallId="c1", status="completed"),
        update("ses_a", sessionUpdate="agent_message_end", status="completed"),
        update("ses_b", sessionUpdate="agent_message_chunk", messageId="m9", text="child"),
        update("ses_b", sessionUpdate="agent_message_end", status="completed"),
        update("ses_a", sessionUpdate="agent_message_chunk", messageId="m1", text="first"),
        update("ses_a", sessionUpdate="agent_message_chunk", messageId="m2", text="It is "),
        update("ses_a", sessionUpdate="agent_message_chunk", messageId="m2", text="8731."),
        update(
            "ses_a",
            sessionUpdate="usage_update",
            inputTokens=120,
            outputTokens=9,
            cacheReadTokens=100,
            cost=0.002,
        ),
        update("ses_a", sessionUpdate="agent_message_end", status="completed"),
        update("ses_a", sessionUpdate="state_update", state="idle", stopReason="end_turn"),
    ]
    transcript = read_updates(lines)
    assert transcript.answer == "It is 8731."
    assert transcript.steps == 2
    assert [(c.name, dict(c.input), c.status) for c in transcript.tool_calls] == [
        ("read", {"file_path": "a.py"}, "completed")
    ]
    assert transcript.usage.input_tokens == 120
    assert transcript.usage.cached_tokens == 100
    assert transcript.usage.cost == 0.002
    assert transcript.stop_reason == "end_turn"


def test_hidden_checks_run_without_the_callers_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checker imports what the agent wrote: it must not hand that code the user's keys."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-never-shown")
    planted = "import os\nKEYS = [k for k in os.environ if 'KEY' in k]\n"
    (tmp_path / "planted.py").write_text(planted)
    verdict = run_python(tmp_path, "import planted\nassert planted.KEYS == [], planted.KEYS\n")
    assert verdict.solved, verdict.reason
