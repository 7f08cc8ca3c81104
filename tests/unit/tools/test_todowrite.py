"""The todowrite tool: the plan reaches the editor, the model reads a checklist."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.testing.permissions import RecordingAsk, deny
from lsp_agent.testing.tool_events import RecordingToolEvents, with_events
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.registry import tool_schema
from lsp_agent.tools.todowrite import TodoWriteParams, TodoWriteTool


async def todowrite(
    ws: Path, todos: list[dict[str, Any]], *, ask: RecordingAsk | None = None
) -> tuple[ToolOutcome, RecordingToolEvents]:
    events = RecordingToolEvents()
    ctx = with_events(tool_context(ws, ask=ask or RecordingAsk()), events)
    outcome = await TodoWriteTool().run(TodoWriteParams.model_validate({"todos": todos}), ctx)
    return outcome, events


async def test_the_whole_list_goes_to_the_editor_as_a_plan(ws: Path) -> None:
    outcome, events = await todowrite(
        ws,
        [
            {"content": "Read the parser", "status": "completed", "priority": "high"},
            {"content": "  Fix the off-by-one  ", "status": "in_progress"},
            {"content": "Add a test", "status": "pending", "priority": "low"},
        ],
    )

    assert events.plans == [
        [
            {"content": "Read the parser", "status": "completed", "priority": "high"},
            {"content": "Fix the off-by-one", "status": "in_progress", "priority": "medium"},
            {"content": "Add a test", "status": "pending", "priority": "low"},
        ]
    ]
    assert not outcome.is_error
    assert outcome.title == "3 todos"
    assert outcome.details.open == 2
    assert list(outcome.details.todos) == events.plans[0]


async def test_the_output_is_a_checklist_with_the_open_count(ws: Path) -> None:
    outcome, _ = await todowrite(
        ws,
        [
            {"content": "done item", "status": "completed"},
            {"content": "current", "status": "in_progress", "priority": "high"},
            {"content": "pending", "status": "pending"},
            {"content": "dropped", "status": "cancelled"},
        ],
    )

    assert outcome.output == (
        "[x] done item\n[>] current (high priority)\n[ ] pending\n[-] dropped\n\n2 open"
    )


async def test_two_items_in_progress_are_kept_with_a_note(ws: Path) -> None:
    outcome, events = await todowrite(
        ws,
        [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}],
    )

    assert not outcome.is_error
    assert [e["status"] for e in events.plans[0]] == ["in_progress", "in_progress"]
    assert "2 open\nNote: 2 items are in_progress; keep one in_progress" in outcome.output


async def test_an_empty_list_clears_the_plan(ws: Path) -> None:
    outcome, events = await todowrite(ws, [])

    assert events.plans == [[]]
    assert outcome.title == "0 todos"
    assert outcome.output == "(The todo list is empty.)\n\n0 open"


async def test_one_item_is_a_singular_title(ws: Path) -> None:
    outcome, _ = await todowrite(ws, [{"content": "only", "status": "pending"}])

    assert outcome.title == "1 todo"


async def test_the_todowrite_permission_is_asked_for_everything(ws: Path) -> None:
    ask = RecordingAsk()

    await todowrite(ws, [{"content": "a", "status": "pending"}], ask=ask)

    assert [(r.permission, r.patterns) for r in ask.requests] == [("todowrite", ("*",))]


async def test_a_refusal_sends_no_plan(ws: Path) -> None:
    ask = RecordingAsk(lambda _request: deny("no plans today", stop_turn=True))

    outcome, events = await todowrite(ws, [{"content": "a", "status": "pending"}], ask=ask)

    assert outcome.is_error
    assert outcome.stop_turn
    assert outcome.output == "no plans today"
    assert events.plans == []


@pytest.mark.parametrize(
    ("todo", "problem"),
    [
        ({"content": "", "status": "pending"}, "content"),
        ({"content": "   ", "status": "pending"}, "content"),
        ({"content": "a", "status": "done"}, "status"),
        ({"content": "a", "status": "pending", "priority": "urgent"}, "priority"),
        ({"status": "pending"}, "content"),
        ({"content": "a", "status": "pending", "owner": "me"}, "owner"),
    ],
)
def test_invalid_items_are_rejected(todo: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        TodoWriteParams.model_validate({"todos": [todo]})

    assert [err["loc"][-1] for err in caught.value.errors()] == [problem]


def test_the_schema_offers_the_statuses_and_priorities() -> None:
    item = tool_schema(TodoWriteParams)["properties"]["todos"]["items"]

    assert item["required"] == ["content", "status"]
    assert item["properties"]["status"]["enum"] == [
        "pending",
        "in_progress",
        "completed",
        "cancelled",
    ]
    assert item["properties"]["priority"]["enum"] == ["high", "medium", "low"]
    assert item["properties"]["priority"]["default"] == "medium"
