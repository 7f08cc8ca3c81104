"""Diagnostics that belong to the edit, over LSP (issue 37 §4): the front-end forwards each
report with the document version it describes; after the agent's edit the model reads only
the errors the edit introduced, for the edited version — an error that was there before,
moved down by the edit, is counted, not listed, and a late report for the version before the
edit is never taken for the edit's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import Document, agent_client, allow_once


def error(line: int, message: str) -> dict[str, Any]:
    return {
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}},
        "message": message,
        "severity": 1,
        "source": "pyright",
    }


async def test_the_model_reads_the_new_error_and_a_count_of_the_old_ones(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    path = workspace / "a.py"
    path.write_text("import os\nx = y\n")
    edit = {"file_path": str(path), "old_string": "import os\n", "new_string": "import os\nz\n"}
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "oops"}]}
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        document = client.open(path, path.read_text())

        def report(version: int, diagnostics: list[dict[str, Any]]) -> None:
            item = {"uri": document.uri, "version": version, "diagnostics": diagnostics}
            client.notify("agent/diagnostics", {"items": [item]})

        report(1, [error(1, "undefined name 'y'")])

        def language_server(changed: Document) -> None:
            # late news of version 1, then the report for the edited version 2
            report(1, [error(0, "stale: from before the edit")])
            report(
                changed.version, [error(1, "undefined name 'z'"), error(2, "undefined name 'y'")]
            )

        client.after_edit = language_server
        client.permission_answers.append(allow_once())
        session = await client.new_session()
        await client.prompt(session, "add z")
        await client.wait_idle(session)
    [block] = fake_llm.model_bodies()[1]["messages"][-1]["content"]
    result = str(block["content"])
    assert "ERROR [2:1] undefined name 'z' (pyright)" in result
    assert "undefined name 'y'" not in result
    assert "(1 older error in a.py unchanged by this change)" in result
    assert "stale" not in result
