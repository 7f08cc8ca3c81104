"""Questions through ``elicitation/create``: the form the client gets, and its answers as the
``question`` tool's reply (in process; the client is a channel answering from a script)."""

from __future__ import annotations

from typing import Any

from acp.exceptions import RequestError

from lsp_agent.acp.editor import PROMPTING
from lsp_agent.acp.elicitation import ElicitationAsker
from lsp_agent.acp.peer import AcpPeer
from lsp_agent.core.question import Answer, Question, QuestionAsk, QuestionOption

PICK = Question(
    question_id="q1",
    question="Which database?",
    header="Database",
    options=(QuestionOption(label="sqlite", description="a file"), QuestionOption(label="pg")),
)
MANY = Question(
    question_id="q2",
    question="Which targets?",
    options=(QuestionOption(label="linux"), QuestionOption(label="mac")),
    multiple=True,
    custom=False,
)
FREE = Question(question_id="q3", question="Anything else?")


class FormClient:
    """Answers ``elicitation/create`` with ``answer`` (or raises it); keeps the requests."""

    def __init__(self, answer: dict[str, Any] | Exception) -> None:
        self.answer = answer
        self.requests: list[tuple[str, Any]] = []

    async def send_request(self, method: str, params: Any = None) -> Any:
        self.requests.append((method, params))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    async def send_notification(self, method: str, params: Any = None) -> None:
        raise AssertionError(f"unexpected notification {method}")


async def ask(
    client: FormClient, *questions: Question, prompting: str = "ses_1", session: str = "ses_1"
) -> Any:
    token = PROMPTING.set(prompting)
    try:
        return await ElicitationAsker(AcpPeer(client)).ask(
            QuestionAsk(session_id=session, tool_call_id="call_1", questions=questions)
        )
    finally:
        PROMPTING.reset(token)


async def test_the_form_has_one_property_per_question_and_a_field_for_own_answers() -> None:
    client = FormClient({"action": "decline"})
    await ask(client, PICK, MANY, FREE)
    [(method, params)] = client.requests
    assert method == "elicitation/create"
    assert params["mode"] == "form"
    assert params["sessionId"] == "ses_1"
    assert params["toolCallId"] == "call_1"
    assert "Which database?" in params["message"]
    properties = params["requestedSchema"]["properties"]
    assert list(properties) == ["q1", "q1_custom", "q2", "q3"]
    assert properties["q1"] == {
        "type": "string",
        "title": "Database",
        "description": "Which database?",
        "oneOf": [
            {"const": "sqlite", "title": "sqlite", "description": "a file"},
            {"const": "pg", "title": "pg"},
        ],
    }
    assert properties["q1_custom"]["type"] == "string"
    assert properties["q2"]["type"] == "array"
    assert properties["q2"]["items"] == {
        "anyOf": [{"const": "linux", "title": "linux"}, {"const": "mac", "title": "mac"}]
    }
    assert properties["q3"] == {
        "type": "string",
        "title": "Anything else?",
        "description": "Anything else?",
    }


async def test_an_accepted_form_is_the_answers() -> None:
    content = {
        "q1": "pg",
        "q1_custom": "  with pgvector ",
        "q2": ["mac", "windows", "linux"],
        "q3": "",
    }
    reply = await ask(FormClient({"action": "accept", "content": content}), PICK, MANY, FREE)
    assert reply.outcome == "answered"
    assert reply.answers == {
        "q1": Answer(selected=("pg",), custom="with pgvector"),
        "q2": Answer(selected=("linux", "mac")),  # the options' order; unknown ones dropped
    }


async def test_a_single_choice_outside_the_options_is_unanswered() -> None:
    reply = await ask(FormClient({"action": "accept", "content": {"q1": "mysql"}}), PICK)
    assert reply.outcome == "answered"
    assert reply.answers == {}


async def test_decline_and_cancel_keep_their_meaning() -> None:
    assert (await ask(FormClient({"action": "decline"}), PICK)).outcome == "declined"
    assert (await ask(FormClient({"action": "cancel"}), PICK)).outcome == "cancelled"


async def test_a_failing_or_malformed_answer_is_declined() -> None:
    failing = FormClient(RequestError.method_not_found("elicitation/create"))
    assert (await ask(failing, PICK)).outcome == "declined"
    assert (await ask(FormClient({"action": "shrug"}), PICK)).outcome == "declined"


async def test_a_subagents_question_names_the_prompting_session_and_no_tool_call() -> None:
    client = FormClient({"action": "decline"})
    await ask(client, FREE, prompting="ses_parent", session="ses_child")
    [(_, params)] = client.requests
    assert params["sessionId"] == "ses_parent"
    assert "toolCallId" not in params
