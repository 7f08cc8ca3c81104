"""Questions the model asks the user (the ``question`` tool; protocol.md §5)."""

from __future__ import annotations

from typing import Any, Literal

import attrs

QuestionOutcome = Literal["answered", "declined", "cancelled"]


@attrs.frozen(kw_only=True)
class QuestionOption:
    label: str
    description: str | None = None


@attrs.frozen(kw_only=True)
class Question:
    question_id: str
    question: str
    header: str = ""
    options: tuple[QuestionOption, ...] = ()
    multiple: bool = False
    custom: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "questionId": self.question_id,
            "header": self.header,
            "question": self.question,
            "options": [
                {"label": o.label, **({"description": o.description} if o.description else {})}
                for o in self.options
            ],
            "multiple": self.multiple,
            "custom": self.custom,
        }


@attrs.frozen(kw_only=True)
class Answer:
    selected: tuple[str, ...] = ()
    custom: str | None = None


@attrs.frozen(kw_only=True)
class QuestionAsk:
    session_id: str
    tool_call_id: str
    questions: tuple[Question, ...]


@attrs.frozen(kw_only=True)
class QuestionReply:
    outcome: QuestionOutcome
    answers: dict[str, Answer] = attrs.field(factory=dict)
    reason: str | None = None
    """For ``cancelled`` by the host, not the user (nobody answered in time): what the
    model reads instead of "the user dismissed the questions"."""

    def answers_json(self) -> dict[str, Any]:
        return {
            qid: {"selected": list(a.selected), **({"custom": a.custom} if a.custom else {})}
            for qid, a in self.answers.items()
        }
