"""The question tool: questions out with ids, answers back as text the model reads."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from lsp_agent.core.question import Answer, Question, QuestionOption, QuestionReply
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.testing.permissions import RecordingAsk, deny
from lsp_agent.testing.tool_events import RecordingToolEvents, with_events
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.question import (
    CANCELLED_MESSAGE,
    DECLINED_MESSAGE,
    QuestionParams,
    QuestionTool,
)

TWO_QUESTIONS: list[dict[str, Any]] = [
    {
        "question": "Which database should the cache use?",
        "header": "Database",
        "options": [
            {"label": "SQLite", "description": "One file, no server (Recommended)"},
            {"label": "Redis"},
        ],
    },
    {
        "question": "Which platforms must it run on?",
        "options": [{"label": "Linux"}, {"label": "macOS"}, {"label": "Windows"}],
        "multiple": True,
        "custom": False,
    },
]


async def ask(
    ws: Path,
    questions: list[dict[str, Any]],
    reply: QuestionReply,
    *,
    permissions: RecordingAsk | None = None,
) -> tuple[ToolOutcome, RecordingToolEvents]:
    events = RecordingToolEvents(reply)
    ctx = with_events(tool_context(ws, ask=permissions or RecordingAsk()), events)
    params = QuestionParams.model_validate({"questions": questions})
    return await QuestionTool().run(params, ctx), events


async def test_the_questions_are_asked_with_ids_q1_q2(ws: Path) -> None:
    _, events = await ask(ws, TWO_QUESTIONS, QuestionReply(outcome="declined"))

    assert events.asked == [
        (
            Question(
                question_id="q1",
                question="Which database should the cache use?",
                header="Database",
                options=(
                    QuestionOption(label="SQLite", description="One file, no server (Recommended)"),
                    QuestionOption(label="Redis"),
                ),
            ),
            Question(
                question_id="q2",
                question="Which platforms must it run on?",
                options=(
                    QuestionOption(label="Linux"),
                    QuestionOption(label="macOS"),
                    QuestionOption(label="Windows"),
                ),
                multiple=True,
                custom=False,
            ),
        )
    ]


async def test_answers_are_read_back_with_the_questions(ws: Path) -> None:
    reply = QuestionReply(
        outcome="answered",
        answers={
            "q1": Answer(custom="Postgres, we already run one"),
            "q2": Answer(selected=("Linux", "macOS")),
        },
    )

    outcome, _ = await ask(ws, TWO_QUESTIONS, reply)

    assert not outcome.is_error
    assert not outcome.stop_turn
    assert outcome.output == (
        'The user answered: "Which database should the cache use?" = '
        '"Postgres, we already run one"; "Which platforms must it run on?" = "Linux, macOS". '
        "Continue with these answers in mind."
    )
    assert outcome.details.outcome == "answered"
    assert outcome.details.answers == {
        "q1": {"selected": [], "custom": "Postgres, we already run one"},
        "q2": {"selected": ["Linux", "macOS"]},
    }


async def test_selected_labels_come_before_the_typed_text(ws: Path) -> None:
    reply = QuestionReply(
        outcome="answered", answers={"q1": Answer(selected=("Redis",), custom="v7 only")}
    )

    outcome, _ = await ask(ws, TWO_QUESTIONS[:1], reply)

    assert '"Which database should the cache use?" = "Redis, v7 only"' in outcome.output


async def test_a_question_without_an_answer_is_unanswered(ws: Path) -> None:
    reply = QuestionReply(outcome="answered", answers={"q1": Answer(selected=("SQLite",))})

    outcome, _ = await ask(ws, TWO_QUESTIONS, reply)

    assert '"Which platforms must it run on?" = Unanswered.' in outcome.output


async def test_declining_is_an_error_and_the_turn_goes_on(ws: Path) -> None:
    outcome, _ = await ask(ws, TWO_QUESTIONS, QuestionReply(outcome="declined"))

    assert outcome.is_error
    assert not outcome.stop_turn
    assert outcome.output == DECLINED_MESSAGE == "The user declined to answer the questions."


async def test_cancelling_ends_the_turn(ws: Path) -> None:
    outcome, _ = await ask(ws, TWO_QUESTIONS, QuestionReply(outcome="cancelled"))

    assert outcome.is_error
    assert outcome.stop_turn
    assert outcome.output == CANCELLED_MESSAGE


async def test_questions_nobody_answered_in_time_end_the_turn_saying_so(ws: Path) -> None:
    why = "Nobody answered the questions within 30 min; the turn ends here."
    outcome, _ = await ask(ws, TWO_QUESTIONS, QuestionReply(outcome="cancelled", reason=why))
    assert outcome.is_error
    assert outcome.stop_turn
    assert outcome.output == why


async def test_the_question_permission_is_asked_first(ws: Path) -> None:
    permissions = RecordingAsk()

    await ask(ws, TWO_QUESTIONS, QuestionReply(outcome="declined"), permissions=permissions)

    assert permissions.permissions() == ["question"]


async def test_a_refusal_asks_nothing(ws: Path) -> None:
    permissions = RecordingAsk(lambda _request: deny("questions are off"))

    outcome, events = await ask(
        ws, TWO_QUESTIONS, QuestionReply(outcome="answered"), permissions=permissions
    )

    assert outcome.is_error
    assert outcome.output == "questions are off"
    assert events.asked == []


async def test_the_title_is_the_header_of_a_single_question(ws: Path) -> None:
    one, _ = await ask(ws, TWO_QUESTIONS[:1], QuestionReply(outcome="declined"))
    two, _ = await ask(ws, TWO_QUESTIONS, QuestionReply(outcome="declined"))

    assert (one.title, two.title) == ("Database", "Asked 2 questions")


async def test_without_anyone_to_ask_the_questions_are_declined(ws: Path) -> None:
    ctx = tool_context(ws, ask=RecordingAsk())  # SilentToolEvents
    params = QuestionParams.model_validate({"questions": [{"question": "Why?", "options": []}]})

    outcome = await QuestionTool().run(params, ctx)

    assert outcome.output == DECLINED_MESSAGE


def test_custom_answers_are_allowed_by_default() -> None:
    params = QuestionParams.model_validate({"questions": [{"question": "Why?", "options": []}]})

    assert params.questions[0].custom is True
    assert params.questions[0].multiple is False
    assert params.questions[0].header == ""


def _question(**changes: Any) -> dict[str, Any]:
    return {"question": "Which?", "options": [{"label": "A"}, {"label": "B"}], **changes}


@pytest.mark.parametrize(
    ("questions", "problem"),
    [
        ([], "at least 1 item"),
        ([_question()] * 5, "at most 4 items"),
        ([_question(header="h" * 31)], "at most 30 characters"),
        ([_question(options=[{"label": "x" * 31}])], "at most 30 characters"),
        ([_question(options=[{"label": f"o{n}"} for n in range(9)])], "at most 8 items"),
        ([_question(options=[{"label": ""}])], "at least 1 character"),
        ([_question(question=" ")], "at least 1 character"),
        ([_question(options=[{"label": "A"}, {"label": "A"}])], "labels must differ"),
        ([_question(options=[], custom=False)], "must allow a custom answer"),
        ([{"question": "Which?"}], "Field required"),
        ([_question(extra=1)], "Extra inputs are not permitted"),
    ],
)
def test_invalid_questions_are_rejected(questions: Sequence[dict[str, Any]], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        QuestionParams.model_validate({"questions": list(questions)})
