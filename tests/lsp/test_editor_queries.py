"""Issue 22, server side, end to end: the editor's language servers as tools
(``agent/editor/query``), the user's focus as context, and ``@file`` / ``#`` mentions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import AgentClient, agent_client, agent_options

A_TEXT = "def greet(name):\n    return name\n\n\nprint(greet('a'))\n"
B_TEXT = "from a import greet\n\ngreet('b')\n"
QUERY_KINDS = ["references", "documentSymbols", "definition", "someFutureKind"]
NAV_TOOLS = {"definition", "references", "hover", "implementation", "symbols"}


def location(uri: str, line: int, character: int) -> dict[str, Any]:
    position = {"line": line, "character": character}
    return {"uri": uri, "range": {"start": position, "end": position}}


def answer_queries(client: AgentClient, answers: dict[str, list[dict[str, Any]]]) -> list[Any]:
    """Answer ``agent/editor/query`` like a front-end, from ``answers`` by kind."""
    asked: list[Any] = []

    def on_query(params: Any) -> Any:
        asked.append(params)
        return {"items": answers.get(params["kind"], [])}

    client.client.feature("agent/editor/query")(on_query)  # type: ignore[no-untyped-call]
    return asked


def uncached(message: dict[str, Any]) -> dict[str, Any]:
    """The message without Anthropic's moving cache breakpoint."""
    blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in message["content"]]
    return {**message, "content": blocks}


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body["tools"]}


def last_tool_result(body: dict[str, Any]) -> str:
    [block] = [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    content = block["content"]
    return content if isinstance(content, str) else "".join(c["text"] for c in content)


async def test_references_come_from_the_editor_inside_the_wall_and_outside_only_counted(
    workspace: Path, tmp_path: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    a, b = workspace / "a.py", workspace / "b.py"
    a.write_text(A_TEXT)
    b.write_text(B_TEXT)
    outside = tmp_path / "site-packages" / "lib.py"
    outside.parent.mkdir()
    outside.write_text("from a import greet  # SECRET_OUTSIDE_LINE\n")
    calls = [
        {"name": "references", "input": {"file_path": "a.py", "symbol": "greet"}},
        {"name": "references", "input": {"file_path": str(b), "line": 3, "character": 1}},
    ]
    fake_llm.set_script(
        {"turns": [{"tool_calls": calls[:1]}, {"tool_calls": calls[1:]}, {"text": "ok"}]}
    )
    options = agent_options(editorQueries=QUERY_KINDS)
    async with agent_client(env=server_env, folders=[workspace], options=options) as client:
        capabilities = client.server_capabilities
        assert capabilities is not None
        assert capabilities.experimental is not None
        mentions = capabilities.experimental["agent"]["mentions"]
        assert mentions == ["diagnostics", "selection", "buffers", "diff"]
        symbol = {
            "name": "greet",
            "kind": 12,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 15}},
            "selectionRange": {
                "start": {"line": 0, "character": 4},
                "end": {"line": 0, "character": 9},
            },
        }
        refs = [
            location(a.as_uri(), 0, 4),
            location(a.as_uri(), 4, 6),
            {
                "targetUri": b.as_uri(),
                "targetRange": location(b.as_uri(), 2, 0)["range"],
                "targetSelectionRange": location(b.as_uri(), 2, 0)["range"],
            },
            location(outside.as_uri(), 0, 14),
        ]
        asked = answer_queries(client, {"references": refs, "documentSymbols": [symbol]})
        session = await client.new_session()
        await client.prompt(session, "who calls greet?")
        assert (await client.wait_idle(session))["stopReason"] == "end_turn"

    bodies = fake_llm.model_bodies()
    assert NAV_TOOLS - tool_names(bodies[0]) == {"hover", "implementation"}
    first = last_tool_result(bodies[1])
    assert first.splitlines() == [
        "a.py:1:5: def greet(name):",
        "a.py:5:7: print(greet('a'))",
        "b.py:3:1: greet('b')",
        "+1 location outside the workspace",
    ]
    assert "SECRET_OUTSIDE_LINE" not in json.dumps(bodies[1])
    assert "lib.py" not in first
    # the symbol was found through documentSymbols: its name, not the line's start
    symbols_ask, references_ask = asked[0], asked[1]
    assert symbols_ask["kind"] == "documentSymbols"
    assert symbols_ask["uri"] == a.as_uri()
    assert references_ask["kind"] == "references"
    assert references_ask["position"] == {"line": 0, "character": 4}
    assert references_ask["sessionId"] == session
    assert asked[2]["uri"] == b.as_uri()
    assert asked[2]["position"] == {"line": 2, "character": 0}
    # no permission was asked in build mode: the tools only read
    assert client.permission_requests == []


async def test_a_client_that_answers_no_queries_gets_no_navigation_tools(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    fake_llm.set_script({"turns": [{"text": "hi"}]})
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session = await client.new_session()
        await client.prompt(session, "hello")
        await client.wait_idle(session)
    [body] = fake_llm.model_bodies()
    assert not tool_names(body) & NAV_TOOLS
    assert "read" in tool_names(body)


async def test_plan_mode_runs_them_without_asking(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    a = workspace / "a.py"
    a.write_text(A_TEXT)
    call = {"name": "definition", "input": {"file_path": "a.py", "line": 5, "character": 7}}
    fake_llm.set_script({"turns": [{"tool_calls": [call]}, {"text": "there"}]})
    options = agent_options(editorQueries=["definition"])
    async with agent_client(env=server_env, folders=[workspace], options=options) as client:
        answer_queries(client, {"definition": [location(a.as_uri(), 0, 4)]})
        session = await client.new_session(mode="plan")
        await client.prompt(session, "where is greet?")
        await client.wait_idle(session)
        assert client.permission_requests == []
    bodies = fake_llm.model_bodies()
    assert NAV_TOOLS & tool_names(bodies[0]) == {"definition"}
    assert last_tool_result(bodies[1]) == "a.py:1:5: def greet(name):"


async def test_the_selection_reaches_the_first_request_with_its_range(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    a = workspace / "a.py"
    a.write_text(A_TEXT)
    fake_llm.set_script({"turns": [{"text": "It returns its argument."}]})
    selection = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 15}}
    context = {
        "activeDocument": {"uri": a.as_uri()},
        "cursor": {"line": 1, "character": 4},
        "selection": selection,
        "selectedText": "def greet(name):\n    return name",
    }
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session = await client.new_session()
        await client.prompt(session, "what does this do?", context=context)
        await client.wait_idle(session)
        shown = await client.request("agent/session/history", {"sessionId": session})
    [body] = fake_llm.model_bodies()
    user = json.dumps(body["messages"][0])
    assert "what does this do?" in user
    assert "Active file: a.py" in user
    assert "Cursor: line 2, column 5" in user
    assert "Selection: a.py:1-2" in user
    assert json.dumps("def greet(name):\n    return name")[1:-1] in user
    assert str(workspace) not in user  # paths relative to the workspace
    # the context is the user message's own, never the system prompt (the cached prefix)
    assert "Selection" not in json.dumps(body.get("system", ""))
    assert shown["events"]


async def test_an_at_file_link_attaches_the_open_documents_text_and_the_transcript_keeps_the_link(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    a = workspace / "a.py"
    a.write_text("MARKER_ON_DISK = 1\n")
    fake_llm.set_script({"turns": [{"text": "one"}, {"text": "two"}]})
    prompt = [
        {"type": "text", "text": "what is in @a.py ?"},
        {"type": "resource_link", "uri": a.as_uri()},
        {"type": "mention", "name": "buffers"},
    ]
    async with agent_client(env=server_env, folders=[workspace]) as client:
        client.open(a, "MARKER_IN_BUFFER = 41\n")
        session = await client.new_session()
        await client.request("agent/session/prompt", {"sessionId": session, "prompt": prompt})
        await client.wait_idle(session)
        client.change(a, "CHANGED_LATER = 2\n")
        seen = len(client.updates)
        await client.prompt(session, "and now?")
        await client.wait_for(
            lambda u: u in client.updates[seen:] and u["update"].get("state") == "idle"
        )
        exported = await client.request(
            "agent/session/export", {"sessionId": session, "format": "markdown"}
        )
        user_updates = [
            u["update"]
            for u in client.session_updates(session)
            if u["update"]["sessionUpdate"] == "user_message"
        ]
    first, second = fake_llm.model_bodies()
    attached = json.dumps(first["messages"][0])
    assert "MARKER_IN_BUFFER = 41" in attached  # the editor's buffer, not the disk
    assert "MARKER_ON_DISK" not in attached
    assert "a.py: 1 lines (unsaved changes)" in attached  # #buffers
    # the second request repeats the first message byte for byte (prefix stability)
    assert uncached(second["messages"][0]) == uncached(first["messages"][0])
    assert "CHANGED_LATER" not in json.dumps(second)
    # people see the link, not the content
    assert "MARKER_IN_BUFFER" not in exported["text"]
    assert "[resource link: " in exported["text"]
    assert "[mention: #buffers]" in exported["text"]
    assert "MARKER_IN_BUFFER" not in json.dumps(user_updates)
