"""docs/protocol.md and docs/protocol.schema.json against the machine-readable protocol.

- every method in ``METHODS`` has a "### `name`" section, and every such section a method;
- every command in ``COMMAND_TYPES`` has a "### `lspAgent.x`" section with an example
  ``workspace/executeCommand`` exchange, and no other command is documented;
- every JSON example in docs/protocol.md is a JSON-RPC message (or a list of them) whose
  params and results validate against the method's models, with no key the models do not know;
  ``workspace/executeCommand`` arguments and results against the command's models, and code
  actions' commands against theirs;
- the capabilities example advertises exactly the commands of ``COMMAND_TYPES``;
- docs/protocol.schema.json is what ``python -m lsp_agent.lsp.schema`` prints;
- ``SESSION_UPDATES`` holds every ``sessionUpdate`` that ``wire.updates.to_update`` produces.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from lsp_agent.core.events import EventDataError, EventType, StoredEvent
from lsp_agent.core.messages import TOOL_KINDS
from lsp_agent.lsp import protocol as p
from lsp_agent.lsp.errors import describe_validation_error
from lsp_agent.lsp.schema import SESSION_UPDATES, main, protocol_schema, render
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.tools.registry import default_registry
from lsp_agent.wire.updates import to_update
from lsp_agent.workspace.truncation import OutputLimits

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "protocol.md"
SCHEMA_FILE = ROOT / "docs" / "protocol.schema.json"
REGENERATE = "python -m lsp_agent.lsp.schema > docs/protocol.schema.json"

METHOD_HEADING = re.compile(r"^### `([^`]+)`[ \t]*$", re.MULTILINE)
COMMAND_PREFIX = "lspAgent."
COMMAND_MENTION = re.compile(r"\blspAgent\.(\w+)")
EXECUTE_COMMAND = "workspace/executeCommand"
CODE_ACTION = "textDocument/codeAction"
ANY_HEADING = re.compile(r"^#{1,3} ", re.MULTILINE)
JSON_BLOCK = re.compile(r"^```json[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)

SERVER_NOT_INITIALIZED = -32002
OTHER_CODES = {SERVER_NOT_INITIALIZED, -32600, -32601, -32603}
"""JSON-RPC/LSP codes the server answers besides ``ErrorCodes``."""


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def _messages(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every example message in ``text``, in order, with the line of its block."""
    for block in JSON_BLOCK.finditer(text):
        line = text.count("\n", 0, block.start()) + 1
        try:
            value = json.loads(block.group(1))
        except json.JSONDecodeError as error:
            pytest.fail(f"docs/protocol.md:{line}: the json block is not valid JSON: {error}")
        for message in value if isinstance(value, list) else [value]:
            if not isinstance(message, dict):
                pytest.fail(f"docs/protocol.md:{line}: an example is not a JSON object")
            yield line, message


def _sections(text: str) -> dict[str, str]:
    """The text of each "### `name`" section, up to the next heading of level 1–3."""
    sections = {}
    for heading in METHOD_HEADING.finditer(text):
        following = ANY_HEADING.search(text, heading.end())
        end = following.start() if following else len(text)
        sections[heading.group(1)] = text[heading.end() : end]
    return sections


def _method_headings(text: str) -> list[str]:
    return [h for h in METHOD_HEADING.findall(text) if not h.startswith(COMMAND_PREFIX)]


def _command_headings(text: str) -> list[str]:
    return [h for h in METHOD_HEADING.findall(text) if h.startswith(COMMAND_PREFIX)]


def _check(model: type[BaseModel], data: Any, where: str) -> None:
    """``data`` validates against ``model`` and holds no key the model does not know."""
    try:
        parsed = model.model_validate(data)
    except ValidationError as error:
        raise AssertionError(f"{where}: does not match {model.__name__}: {error}") from None
    dumped = parsed.model_dump(by_alias=True, exclude_unset=True, mode="json")
    assert dumped == data, f"{where}: keys {model.__name__} does not know (a typo?)"


# -- (a) headings ------------------------------------------------------------------------------


def test_every_method_has_a_section_and_every_section_a_method() -> None:
    documented = _method_headings(_doc())
    assert sorted(set(p.METHODS) - set(documented)) == [], "methods without a ### section"
    assert sorted(set(documented) - set(p.METHODS)) == [], "### sections of unknown methods"
    assert len(documented) == len(set(documented)), "a method is documented twice"


def test_every_command_has_a_section_and_every_section_a_command() -> None:
    text = _doc()
    documented = _command_headings(text)
    assert sorted(set(p.COMMAND_TYPES) - set(documented)) == [], "commands without a section"
    assert sorted(set(documented) - set(p.COMMAND_TYPES)) == [], "sections of unknown commands"
    assert len(documented) == len(set(documented)), "a command is documented twice"
    mentioned = {COMMAND_PREFIX + name for name in COMMAND_MENTION.findall(text)}
    assert sorted(mentioned - set(p.COMMAND_TYPES)) == [], "mentions of unknown commands"


# -- (b) examples ------------------------------------------------------------------------------


def test_every_example_is_a_valid_message_of_its_method() -> None:
    """Params are checked when the response is seen: a request answered with ``-32602``
    is an example of malformed params, so its params must *not* validate."""
    pending: dict[Any, tuple[str, dict[str, Any], str]] = {}
    count = 0
    for line, message in _messages(_doc()):
        count += 1
        where = f"docs/protocol.md:{line}"
        assert message.get("jsonrpc") == "2.0", f"{where}: jsonrpc must be '2.0'"
        method = message.get("method")
        if isinstance(method, str):
            if "id" not in message:
                _check_call(method, message, where)
                continue
            assert message["id"] not in pending, f"{where}: id {message['id']} is unanswered"
            if method == EXECUTE_COMMAND:
                command = message["params"]["command"]
                assert command in p.COMMAND_TYPES, f"{where}: unknown command {command!r}"
            pending[message["id"]] = (method, message, where)
            continue
        assert "id" in message, f"{where}: neither a request, a notification nor a response"
        assert message["id"] in pending, f"{where}: a response to no request above it"
        method, request, asked_at = pending.pop(message["id"])
        code = message.get("error", {}).get("code")
        if code == p.ErrorCodes.INVALID_PARAMS:
            with pytest.raises(AssertionError):
                _check_call(method, request, asked_at)
        else:
            _check_call(method, request, asked_at)
        _check_answer(method, message, where, request)
    assert count > 0
    assert pending == {}, f"requests without a response example: {list(pending)}"


def _check_call(method: str, message: dict[str, Any], where: str) -> None:
    params: Any = message.get("params")
    if method == "initialize":
        options = params.get("initializationOptions") or {}
        if "agent" in options:  # else a plain LSP client
            _check(p.AgentClientOptions, options["agent"], where)
        return
    if method == EXECUTE_COMMAND:
        command = p.COMMAND_TYPES[params["command"]]
        arguments = params.get("arguments")
        assert isinstance(arguments, list), f"{where}: arguments must be a list"
        assert len(arguments) == 1, f"{where}: {command.name} takes exactly one argument"
        _check(command.argument, arguments[0], f"{where} ({command.name} argument)")
        return
    if method not in p.METHODS:
        assert not method.startswith("agent/"), f"{where}: {method} is not in METHODS"
        return
    spec = p.METHODS[method]
    is_request = "id" in message
    assert is_request == (spec.kind == "request"), f"{where}: {method} is a {spec.kind}"
    _check(spec.params, params, f"{where} ({method} params)")
    if method == "agent/session/update":
        kind = params["update"].get("sessionUpdate")
        assert kind in SESSION_UPDATES, f"{where}: unknown sessionUpdate {kind!r}"


def _check_answer(
    method: str, message: dict[str, Any], where: str, request: dict[str, Any]
) -> None:
    if "error" in message:
        code = message["error"]["code"]
        known = {v for k, v in vars(p.ErrorCodes).items() if k.isupper()} | OTHER_CODES
        assert code in known, f"{where}: error code {code} is not one the server uses"
        assert isinstance(message["error"]["message"], str)
        return
    assert "result" in message, f"{where}: a response needs a result or an error"
    result = message["result"]
    where = f"{where} ({method} result)"
    if method == "initialize":
        _check(p.AgentServerCapabilities, result["capabilities"]["experimental"]["agent"], where)
    elif method == EXECUTE_COMMAND:
        command = p.COMMAND_TYPES[request["params"]["command"]]
        _check(command.result, result, f"{where} ({command.name} result)")
    elif method == CODE_ACTION:
        _check_code_actions(result, where)
    elif method == "agent/session/askQuestion":
        _check(p.QUESTION_RESULT, {"result": result}, where)
    elif method in p.METHODS:
        model = p.METHODS[method].result
        if model is None:
            assert result is None, f"{where}: the result is null"
        else:
            _check(model, result, where)


def _check_code_actions(actions: Any, where: str) -> None:
    """Every action's command is one of ours, with one argument its model accepts."""
    assert isinstance(actions, list), f"{where}: code actions are a list"
    for action in actions:
        command = action["command"]
        assert command["command"] in p.COMMAND_TYPES, f"{where}: unknown {command['command']}"
        spec = p.COMMAND_TYPES[command["command"]]
        assert len(command["arguments"]) == 1, f"{where}: {spec.name} takes one argument"
        _check(spec.argument, command["arguments"][0], f"{where} ({spec.name} argument)")


def test_every_method_section_has_an_example_exchange() -> None:
    for name, section in _sections(_doc()).items():
        if name.startswith(COMMAND_PREFIX):
            continue
        messages = [m for _, m in _messages(section)]
        calls = [m for m in messages if m.get("method") == name]
        assert calls, f"### `{name}` has no example of {name}"
        if p.METHODS[name].kind == "request":
            ids = {m["id"] for m in calls}
            answers = [m for m in messages if "result" in m and m.get("id") in ids]
            assert answers, f"### `{name}` has no example response with a result"


def test_every_command_section_has_an_example_exchange() -> None:
    """Each "### `lspAgent.x`" section runs its command and shows a result (the argument and
    result are validated with the other examples)."""
    sections = _sections(_doc())
    for name in p.COMMAND_TYPES:
        messages = [m for _, m in _messages(sections[name])]
        calls = [
            m
            for m in messages
            if m.get("method") == EXECUTE_COMMAND and m["params"]["command"] == name
        ]
        assert calls, f"### `{name}` has no workspace/executeCommand example of {name}"
        ids = {m["id"] for m in calls}
        answers = [m for m in messages if "result" in m and m.get("id") in ids]
        assert answers, f"### `{name}` has no example response with a result"


def test_the_capabilities_example_lists_exactly_the_commands() -> None:
    requests: set[Any] = set()
    results = []
    for _, message in _messages(_doc()):
        if message.get("method") == "initialize":
            requests.add(message["id"])
        elif "result" in message and message.get("id") in requests:
            results.append(message["result"]["capabilities"])
    assert results, "no example of the initialize result"
    commands = list(p.COMMAND_TYPES)
    for capabilities in results:
        assert capabilities["experimental"]["agent"]["commands"] == commands
        assert capabilities["executeCommandProvider"]["commands"] == commands
        assert capabilities["experimental"]["agent"]["revert"] is True


def test_every_session_update_and_error_code_is_documented() -> None:
    text = _doc()
    for kind in SESSION_UPDATES:
        assert f"`{kind}` `{{" in text, f"the sessionUpdate {kind!r} is not documented"
    for name, code in vars(p.ErrorCodes).items():
        if name.isupper():
            assert f"| `{code}` |" in text, f"error {code} ({name}) is not in the table"


def test_the_documented_invalid_params_message_is_the_servers() -> None:
    with pytest.raises(ValidationError) as error:
        p.SessionIdParams.model_validate({})
    message = describe_validation_error(error.value)
    assert message == "invalid params: sessionId: Field required"
    assert f"`{message}`" in _doc()
    with pytest.raises(ValidationError) as error:
        p.CommandTarget.model_validate({"uri": "file:///home/u/proj/a.py"})
    message = describe_validation_error(error.value)
    assert message == "invalid params: range: Field required"
    assert f"`{message}`" in _doc()


# -- (c) the schema file -----------------------------------------------------------------------


def test_the_schema_file_is_up_to_date() -> None:
    current = SCHEMA_FILE.read_text(encoding="utf-8") if SCHEMA_FILE.exists() else ""
    assert current == render(), f"docs/protocol.schema.json is out of date; run: {REGENERATE}"
    assert json.loads(current) == protocol_schema()


def test_the_schema_describes_every_method() -> None:
    schema = protocol_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["protocolVersion"] == p.PROTOCOL_VERSION
    assert set(schema["methods"]) == set(p.METHODS)
    for name, entry in schema["methods"].items():
        spec = p.METHODS[name]
        assert (entry["direction"], entry["kind"]) == (spec.direction, spec.kind)
        refs = [entry["params"]] + ([entry["result"]] if entry["result"] is not None else [])
        for ref in refs:
            assert ref["$ref"].removeprefix("#/$defs/") in schema["$defs"], (name, ref)
    assert schema["methods"]["agent/session/delete"]["result"] is None
    assert schema["methods"]["agent/session/askQuestion"]["result"] is not None
    assert schema["errorCodes"]["SessionNotFound"] == p.ErrorCodes.SESSION_NOT_FOUND
    assert schema["sessionUpdates"] == list(SESSION_UPDATES)


def test_the_schema_describes_every_command() -> None:
    schema = protocol_schema()
    assert set(schema["commands"]) == set(p.COMMAND_TYPES)
    for name, entry in schema["commands"].items():
        spec = p.COMMAND_TYPES[name]
        assert set(entry) == {"argument", "result"}
        for ref, model in ((entry["argument"], spec.argument), (entry["result"], spec.result)):
            defined = ref["$ref"].removeprefix("#/$defs/")
            assert defined in schema["$defs"], (name, ref)
            assert schema["$defs"][defined]["title"] == model.__name__, (name, ref)
    target = schema["$defs"]["CommandTarget"]
    assert sorted(target["required"]) == ["range", "uri"]


def test_check_flag_reports_a_stale_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.json"
    good.write_text(render(), encoding="utf-8")
    assert main(["--check", str(good)]) == 0
    stale = tmp_path / "stale.json"
    stale.write_text("{}\n", encoding="utf-8")
    assert main(["--check", str(stale)]) == 1
    assert "python -m lsp_agent.lsp.schema" in capsys.readouterr().err
    assert main(["--check", str(tmp_path / "missing.json")]) == 1


def test_without_check_it_prints_the_schema(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main([]) == 0
    assert capfdbinary.readouterr().out.decode("utf-8") == render()


# -- (d) sessionUpdate values ------------------------------------------------------------------

SES, MSG, CALL = "ses_1", "msg_1", "toolu_1"
SAMPLES: dict[str, dict[str, Any]] = {
    "session_created": {
        "sessionId": SES,
        "workspaceFolder": "file:///home/u/proj",
        "title": "",
        "model": "anthropic/claude-sonnet-4-5",
        "mode": "build",
    },
    "user_message_admitted": {
        "messageId": MSG,
        "content": [{"type": "text", "text": "hi"}],
        "clientMessageId": "c1",
    },
    "user_message_promoted": {"messageId": MSG, "content": [{"type": "text", "text": "hi"}]},
    "assistant_message_started": {"messageId": "msg_2", "model": "anthropic/x", "step": 1},
    "text_delta": {"messageId": "msg_2", "partId": "prt_1", "text": "Hel"},
    "reasoning_delta": {"messageId": "msg_2", "partId": "prt_2", "text": "hmm"},
    "reasoning_ended": {"messageId": "msg_2", "partId": "prt_2", "signature": "sig"},
    "tool_call_updated": {
        "toolCallId": CALL,
        "messageId": "msg_2",
        "toolName": "read",
        "kind": "read",
        "status": "completed",
        "input": {"file_path": "a.py"},
        "output": "1: x = 1",
        "title": "a.py",
    },
    "assistant_message_ended": {
        "messageId": "msg_2",
        "status": "completed",
        "finishReason": "end_turn",
    },
    "usage_updated": {
        "inputTokens": 10,
        "outputTokens": 5,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
        "contextUsed": 15,
        "contextSize": 200_000,
    },
    "state_changed": {"state": "idle", "stopReason": "end_turn"},
    "title_set": {"title": "What a.py does"},
    "permission_asked": {
        "toolCallId": CALL,
        "messageId": "msg_2",
        "permission": "edit",
        "patterns": ["a.py"],
        "always": ["a.py"],
        "title": "Edit a.py",
    },
    "permission_resolved": {
        "toolCallId": CALL,
        "messageId": "msg_2",
        "permission": "edit",
        "state": "rejected",
        "optionKind": "reject_once",
        "reason": "not now",
    },
    "question_asked": {
        "toolCallId": CALL,
        "questions": [
            {
                "questionId": "q1",
                "header": "Runner",
                "question": "Which?",
                "options": [{"label": "pytest"}],
                "multiple": False,
                "custom": True,
            }
        ],
    },
    "question_resolved": {
        "toolCallId": CALL,
        "state": "answered",
        "answers": {"q1": {"selected": ["pytest"]}},
    },
    "plan_updated": {
        "toolCallId": CALL,
        "entries": [{"content": "write tests", "status": "pending", "priority": "high"}],
    },
    "process_started": {"toolCallId": CALL, "pgid": 4242, "startTicks": 99, "ownerPid": 42},
    "process_ended": {"toolCallId": CALL, "pgid": 4242},
    "tool_withheld": {"toolName": "bash", "error": "failed 3 times", "failures": 3},
    "context_built": {
        "epoch": 1,
        "baseline": "Today is 2026-11-30.",
        "date": "2026-11-30",
        "instructions": {},
        "skills": [],
    },
    "context_noted": {
        "messageId": "msg_3",
        "text": "The date is now 2026-12-01.",
        "date": "2026-12-01",
        "instructions": {},
        "skills": [],
    },
    "compaction_started": {"auto": False, "reason": "manual"},
    "compaction_ended": {"auto": False, "summary": "We read a.py.", "firstKeptMessageId": MSG},
    "checkpoint_recorded": {
        "checkpointId": "chk_1",
        "messageId": MSG,
        "stepMessageId": "msg_2",
        "before": "tree1",
        "after": "tree2",
        "files": [{"path": "a.py", "status": "modify", "additions": 1, "deletions": 1}],
        "patch": "--- a/a.py\n+++ b/a.py\n",
    },
    "revert_staged": {
        "messageId": MSG,
        "restoreTree": "tree1",
        "undoTree": "tree2",
        "files": ["a.py"],
        "conflicts": [],
        "hidden": ["msg_2"],
    },
    "revert_cleared": {"messageId": MSG, "files": ["a.py"]},
    "revert_committed": {"messageId": MSG, "dropped": ["msg_2"]},
    "config_changed": {
        "configId": "mode",
        "value": "plan",
        "configOptions": [
            {
                "configId": "mode",
                "name": "Mode",
                "category": "mode",
                "type": "select",
                "currentValue": "plan",
                "options": [{"value": "build", "name": "Build"}, {"value": "plan", "name": "Plan"}],
            }
        ],
    },
    "review_recorded": {
        "checkpointId": "chk_1",
        "messageId": MSG,
        "stepMessageId": "msg_2",
        "before": "tree1",
        "after": "tree2",
        "hunks": [{"hunkId": "hnk_1", "path": "a.py", "kind": "modified"}],
        "files": [
            {"uri": "file:///w/a.py", "status": "modified", "pending": 1, "kept": 0, "undone": 0}
        ],
    },
    "review_resolved": {
        "action": "keep",
        "resolved": ["hnk_1"],
        "conflicts": [],
        "files": [
            {"uri": "file:///w/a.py", "status": "modified", "pending": 0, "kept": 1, "undone": 0}
        ],
    },
    "review_commented": {
        "commentId": "cmt_1",
        "hunkIds": ["hnk_1"],
        "text": "use a constant",
        "files": [
            {"uri": "file:///w/a.py", "status": "kept", "pending": 0, "kept": 1, "undone": 0}
        ],
    },
    "review_comments_sent": {
        "commentIds": ["cmt_1"],
        "messageId": "msg_2",
        "files": [
            {"uri": "file:///w/a.py", "status": "kept", "pending": 0, "kept": 1, "undone": 0}
        ],
    },
    "until_checked": {
        "command": "pytest -q",
        "attempt": 2,
        "maxAttempts": 5,
        "verdict": "retry",
        "exitCode": 1,
    },
    "suggestion_feedback": {
        "suggestionId": "nxe_1",
        "kind": "next_edit",
        "accepted": True,
        "uri": "file:///w/a.py",
        "line": 3,
        "summary": "rename x → y",
    },
}
"""Plausible ``data`` per event type (docs/events.md)."""


def _sample(kind: str) -> dict[str, Any]:
    if kind in SAMPLES:
        return SAMPLES[kind]
    merged: dict[str, Any] = {}  # a type added since: every key any sample has
    for data in SAMPLES.values():
        merged.update(data)
    return merged


@pytest.mark.parametrize("kind", typing.get_args(EventType))
def test_every_update_the_server_builds_is_a_known_session_update(kind: EventType) -> None:
    event = StoredEvent(
        session_id=SES, seq=7, type=kind, data=_sample(kind), time="2026-11-30T10:44:49.123Z"
    )
    try:
        params = to_update(event)
    except (KeyError, EventDataError) as missing:
        pytest.fail(f"to_update needs {missing} for {kind!r}: add a sample to SAMPLES")
    assert params["update"]["sessionUpdate"] in SESSION_UPDATES, (
        f"{kind!r} becomes {params['update']['sessionUpdate']!r}: add it to "
        "lsp_agent/lsp/schema.py SESSION_UPDATES (and document it in docs/protocol.md)"
    )
    _check(p.SessionUpdateParams, params, kind)


# -- (d) one list of tool kinds -----------------------------------------------------------------


def test_the_schema_exports_the_one_list_of_tool_kinds_and_the_clients_follow_it(
    tmp_path: Path,
) -> None:
    kinds = protocol_schema()["toolKinds"]
    assert kinds == list(TOOL_KINDS)
    # every built-in tool's kind is on it
    tools = default_registry(RecordingEditor(), limits=OutputLimits(), spill_root=tmp_path)
    assert {spec.kind for spec in tools.specs()} <= set(kinds)
    # the VS Code client's type is the same list
    protocol_ts = (ROOT / "vscode-extension" / "src" / "shared" / "protocol.ts").read_text()
    match = re.search(r"export type ToolKind = ([^;]+);", protocol_ts)
    assert match is not None
    assert re.findall(r'"([a-z_]+)"', match.group(1)) == kinds
