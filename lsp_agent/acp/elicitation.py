"""The model's questions as an ACP form (``elicitation/create``, issue 23 §8).

Elicitation is not in ACP v1's stable schema: the SDK (schema 1.19) marks it UNSTABLE, and
a client opts in with ``clientCapabilities.elicitation.form``. Without that the editor
answers ``declined``, as ``run`` does without a terminal (``editor.py``).

One form per ``question`` call, one property per question (``q1``, ``q2``…): a single
choice is a string ``oneOf`` its options, several choices an ``array`` of them, a question
without options a free-text string; where the model allows an answer of the user's own,
a ``q1_custom`` string beside it. The client's ``accept`` becomes the answers (values that
are not among the options are dropped, empty ones are unanswered), ``decline`` is
``declined`` (the turn goes on), ``cancel`` is ``cancelled`` (the turn ends); a client
error or a malformed answer counts as ``declined``.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from acp.schema import (
    AcceptElicitationResponse,
    CancelElicitationResponse,
    CreateFormSessionElicitationRequest,
    DeclineElicitationResponse,
    ElicitationMultiSelectPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    EnumOption,
    TitledMultiSelectItems,
)
from pydantic import Field, RootModel

from lsp_agent.acp.editor import PROMPTING
from lsp_agent.acp.peer import AcpPeer, ClientError
from lsp_agent.core.question import Answer, Question, QuestionAsk, QuestionReply

__all__ = ["CUSTOM_SUFFIX", "ElicitationAsker", "answers_of", "form_for"]

CUSTOM_SUFFIX = "_custom"
"""The property of a question's own answer: ``q1_custom``."""

_log = logging.getLogger(__name__)

_Property = ElicitationStringPropertySchema | ElicitationMultiSelectPropertySchema


class _Reply(
    RootModel[
        Annotated[
            AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse,
            Field(discriminator="action"),
        ]
    ]
):
    """What ``elicitation/create`` answers (another action is a malformed answer)."""


class ElicitationAsker:
    """Implements the editor's ``QuestionAsker`` over ``elicitation/create``."""

    def __init__(self, peer: AcpPeer) -> None:
        self._peer = peer

    async def ask(self, ask: QuestionAsk) -> QuestionReply:
        session = PROMPTING.get() or ask.session_id
        request = CreateFormSessionElicitationRequest(
            session_id=session,
            # a subagent's tool call is not one the client knows
            tool_call_id=ask.tool_call_id if session == ask.session_id else None,
            message=_message(ask.questions),
            mode="form",
            requested_schema=form_for(ask.questions),
        )
        try:
            reply = (await self._peer.request("elicitation/create", request, _Reply)).root
        except ClientError as error:
            _log.warning("questions declined: %s", error)
            return QuestionReply(outcome="declined")
        if isinstance(reply, CancelElicitationResponse):
            return QuestionReply(outcome="cancelled")
        if isinstance(reply, DeclineElicitationResponse):
            return QuestionReply(outcome="declined")
        return QuestionReply(
            outcome="answered", answers=answers_of(ask.questions, reply.content or {})
        )


def form_for(questions: tuple[Question, ...]) -> ElicitationSchema:
    """The form asking ``questions``."""
    properties: dict[str, _Property] = {}
    for q in questions:
        title = q.header or q.question
        if q.options:
            choices = [
                EnumOption(const=o.label, title=o.label, description=o.description)
                for o in q.options
            ]
            if q.multiple:
                properties[q.question_id] = ElicitationMultiSelectPropertySchema(
                    type="array",
                    title=title,
                    description=q.question,
                    items=TitledMultiSelectItems(any_of=choices),
                )
            else:
                properties[q.question_id] = ElicitationStringPropertySchema(
                    type="string", title=title, description=q.question, one_of=choices
                )
            if q.custom:
                properties[q.question_id + CUSTOM_SUFFIX] = ElicitationStringPropertySchema(
                    type="string",
                    title=f"{title}: your own answer",
                    description="Instead of, or besides, the choices above (optional).",
                )
        else:
            properties[q.question_id] = ElicitationStringPropertySchema(
                type="string", title=title, description=q.question
            )
    return ElicitationSchema(type="object", properties=properties)


def answers_of(questions: tuple[Question, ...], content: dict[str, Any]) -> dict[str, Answer]:
    """The answers in an accepted form's ``content``; a question left empty has none."""
    answers: dict[str, Answer] = {}
    for q in questions:
        labels = [o.label for o in q.options]
        value = content.get(q.question_id)
        selected: tuple[str, ...] = ()
        custom: str | None = None
        if not q.options:
            custom = _text(value)
        else:
            picked = value if isinstance(value, list) else [value]
            selected = tuple(label for label in labels if label in picked)
            if not q.multiple:
                selected = selected[:1]
            if q.custom:
                custom = _text(content.get(q.question_id + CUSTOM_SUFFIX))
        if selected or custom:
            answers[q.question_id] = Answer(selected=selected, custom=custom)
    return answers


def _text(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _message(questions: tuple[Question, ...]) -> str:
    if len(questions) == 1:
        return questions[0].question
    return "The agent asks:\n" + "\n".join(f"- {q.question}" for q in questions)
