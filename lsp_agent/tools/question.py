"""The ``question`` tool: ask the user a few questions and wait for the answers.

The questions go to the editor through ``ctx.call.events.ask_question`` (protocol.md §5) with
ids ``q1``, ``q2``…; the answers come back by id. A user who declines leaves the turn going
(the model carries on without answers); one who cancels ends the turn, like a reject without a
reason. Without anyone to ask, the events answer ``declined``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.question import Question, QuestionOption, QuestionReply
from lsp_agent.core.tool_details import QuestionDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.tools.base import ToolRunContext, load_description, one_line_title, refusal

__all__ = [
    "CANCELLED_MESSAGE",
    "DECLINED_MESSAGE",
    "MAX_LABEL_CHARS",
    "MAX_OPTIONS",
    "MAX_QUESTIONS",
    "OptionParams",
    "QuestionItem",
    "QuestionParams",
    "QuestionTool",
]

MAX_QUESTIONS = 4
MAX_OPTIONS = 8
MAX_LABEL_CHARS = 30
DECLINED_MESSAGE = "The user declined to answer the questions."
CANCELLED_MESSAGE = "The user dismissed the questions."

_Label = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_LABEL_CHARS)
]


class OptionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: _Label = Field(description=f"What the user picks; at most {MAX_LABEL_CHARS} characters.")
    description: str | None = Field(
        default=None, description="What choosing this option means, in a sentence."
    )


class QuestionItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)] = Field(
        description="The whole question, as the user should read it."
    )
    header: Annotated[str, StringConstraints(strip_whitespace=True, max_length=30)] = Field(
        default="", description="A very short label for the question (at most 30 characters)."
    )
    options: list[OptionParams] = Field(
        max_length=MAX_OPTIONS,
        description=f"The choices (0 to {MAX_OPTIONS}); an empty list asks for free text.",
    )
    multiple: bool = Field(default=False, description="Whether several options may be chosen.")
    custom: bool = Field(
        default=True, description="Whether the user may type an answer of their own."
    )

    @model_validator(mode="after")
    def _answerable(self) -> QuestionItem:
        labels = [option.label for option in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError("option labels must differ from each other")
        if not self.options and not self.custom:
            raise ValueError("a question without options must allow a custom answer")
        return self


class QuestionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[QuestionItem] = Field(
        min_length=1,
        max_length=MAX_QUESTIONS,
        description=f"The questions to ask together (1 to {MAX_QUESTIONS}).",
    )


class QuestionTool:
    """Implements ``Tool[QuestionParams]``."""

    name = "question"
    kind: ToolKind = "other"
    permission = PermissionKind.QUESTION
    mutates = False
    Params = QuestionParams

    def __init__(self) -> None:
        self.description = load_description(self.name)

    def describe(self, params: QuestionParams, roots: Sequence[str]) -> str:
        count = len(params.questions)
        if count == 1:
            return one_line_title(f"Ask: {params.questions[0].question}")
        return f"Ask {count} questions"

    async def run(self, params: QuestionParams, ctx: ToolRunContext) -> ToolOutcome:
        questions = tuple(_question(n, item) for n, item in enumerate(params.questions, 1))
        title = _title(questions)
        verdict = await ctx.ask(
            PermissionRequest(permission=self.permission, patterns=("*",), title=title)
        )
        if not verdict.allowed:
            return refusal(verdict, title=title)
        reply = await ctx.call.events.ask_question(questions)
        details = QuestionDetails(outcome=reply.outcome)
        if reply.outcome == "declined":
            return ToolOutcome(output=DECLINED_MESSAGE, is_error=True, title=title, details=details)
        if reply.outcome == "cancelled":
            return ToolOutcome(
                output=reply.reason or CANCELLED_MESSAGE,
                is_error=True,
                title=title,
                details=details,
                stop_turn=True,
            )
        details = QuestionDetails(outcome=reply.outcome, answers=reply.answers_json())
        return ToolOutcome(output=_answered(questions, reply), title=title, details=details)


def _question(n: int, item: QuestionItem) -> Question:
    return Question(
        question_id=f"q{n}",
        question=item.question,
        header=item.header,
        options=tuple(
            QuestionOption(label=o.label, description=o.description) for o in item.options
        ),
        multiple=item.multiple,
        custom=item.custom,
    )


def _title(questions: tuple[Question, ...]) -> str:
    if len(questions) == 1:
        return questions[0].header or "Asked 1 question"
    return f"Asked {len(questions)} questions"


def _answered(questions: tuple[Question, ...], reply: QuestionReply) -> str:
    shown = []
    for q in questions:
        answer = reply.answers.get(q.question_id)
        values = [*answer.selected, *([answer.custom] if answer.custom else [])] if answer else []
        shown.append(f'"{q.question}" = ' + (f'"{", ".join(values)}"' if values else "Unanswered"))
    return f"The user answered: {'; '.join(shown)}. Continue with these answers in mind."
