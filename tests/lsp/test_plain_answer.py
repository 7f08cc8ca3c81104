"""A plain LSP client always gets the answer (issue 32 §4), against the real ``lsp-agent
serve``: a client without ``window/showDocument`` (Eglot: pytest-lsp's Emacs capabilities)
still has the transcript written, is told where (``window/logMessage``) and shown the
answer's preview (``window/showMessage``, and the progress's end message); a failed turn is
a message with its error."""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types as lsp

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import AgentClient, agent_client
from tests.support.waiting import wait_until

ANSWER = "The value is now two. " + "More words about it. " * 20


async def ask(client: AgentClient, path: Path) -> None:
    """ "Explain with agent" on the file's first line, as the code-action menu runs it."""
    client.open(path, path.read_text())
    selection = lsp.Range(
        start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=5)
    )
    actions = await client.code_actions(path, selection)
    assert actions is not None
    [explain] = [
        a for a in actions if isinstance(a, lsp.CodeAction) and a.title == "Explain with agent"
    ]
    assert explain.command is not None
    await client.execute(explain.command.command, explain.command.arguments[0])


def end_message(client: AgentClient) -> str:
    [(_token, reports)] = [
        (token, reports)
        for token, reports in client.client.progress_reports.items()
        if token != "lsp-agent/starting"
    ]
    assert reports[-1].kind == "end"
    return str(reports[-1].message)


async def test_without_show_document_the_transcript_is_written_and_the_answer_shown(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 2\n")
    fake_llm.set_script({"turns": [{"text": ANSWER}]})
    async with agent_client(
        env=server_env, folders=[workspace], plain=True, capabilities="emacs"
    ) as client:
        await ask(client, path)
        await wait_until(lambda: bool(client.client.messages))
        [shown] = client.client.messages
        logged = [m.message for m in client.client.log_messages if "transcript" in m.message]
        ended = end_message(client)
        assert client.client.shown_documents == []

    assert shown.type == lsp.MessageType.Info
    assert shown.message.startswith("lsp-agent: The value is now two. More words")
    [where] = re.findall(r"the whole conversation: (\S+\.md)\)", shown.message)
    transcript = Path(where)
    assert not str(transcript).startswith(str(workspace))
    assert "The value is now two." in transcript.read_text()
    assert any(where in line for line in logged)
    # the progress ends with the answer's beginning, cut short
    assert ended.startswith("end_turn: The value is now two.")
    assert ended.endswith("…")
    assert len(ended) < len(ANSWER)


async def test_a_failed_turn_is_a_message_with_its_error(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 2\n")
    fake_llm.set_script({"turns": [{"error": "auth"}]})
    async with agent_client(env=server_env, folders=[workspace], plain=True) as client:
        await ask(client, path)
        await wait_until(lambda: bool(client.client.messages))
        [shown] = client.client.messages
        ended = end_message(client)

    assert shown.type == lsp.MessageType.Error
    assert "401" in shown.message
    assert "ANTHROPIC_API_KEY" in shown.message
    assert ended.startswith("error: ")
