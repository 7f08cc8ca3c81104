"""The gate and the user's own version of an edit proposal (``PermissionReply.modified``):
kept only for an allowed ``edit`` ask and the files it proposes a text for, handed to the
tool in the verdict, and the answer marked ``modified`` in the log and on the wire."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pytest

from lsp_agent.core.documents import FilePreview
from lsp_agent.core.messages import ToolCallPart
from lsp_agent.core.permission.rules import PermissionReply, PermissionRequest
from lsp_agent.core.permission.subjects import EditSubject
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.wire.updates import to_update
from tests.unit.core.test_gate import AskingTools, Gate, calls, text

PROPOSED = "x = 'model'\n"


class ProposingTools(AskingTools):
    """``write`` asks to change ``/ws/a.py`` (to :data:`PROPOSED`) and to delete
    ``/ws/gone.py``; ``read`` asks a ``read`` with no previews. Records what the verdict
    handed on."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list[Mapping[str, str]] = []

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        if call.name == "read":
            request = PermissionRequest(permission="read", patterns=("a.py",), title="Read")
        else:
            request = PermissionRequest(
                permission="edit",
                patterns=("a.py", "gone.py"),
                title="Patch",
                subject=EditSubject(),
                previews=(
                    FilePreview(path="/ws/a.py", base_text="x = 1\n", proposed_text=PROPOSED),
                    FilePreview(path="/ws/gone.py", base_text="g = 1\n", proposed_text=None),
                ),
            )
        verdict = await ctx.ask(request)
        self.handed.append(verdict.modified)
        return ToolOutcome(output="ok" if verdict.allowed else verdict.message)


def allow(modified: dict[str, str], kind: str = "allow_once") -> PermissionReply:
    return PermissionReply(kind=kind, modified=modified)  # type: ignore[arg-type]


async def run(store: SqliteEventStore, tool: str, reply: PermissionReply) -> Gate:
    g = Gate(store, [calls((tool, "a.py")), text("done")], [reply], tools=ProposingTools())
    await g.turn()
    return g


def resolved(g: Gate) -> dict[str, object]:
    (event,) = g.editor.of_type("permission_resolved")
    return dict(event.data)


async def test_the_users_text_for_a_file_of_the_ask_reaches_the_tool(
    store: SqliteEventStore,
) -> None:
    g = await run(store, "write", allow({"/ws/a.py": "x = 'user'\n"}, "allow_session"))

    assert isinstance(g.tools, ProposingTools)
    assert g.tools.handed == [{"/ws/a.py": "x = 'user'\n"}]
    assert resolved(g)["modified"] is True
    (event,) = g.editor.of_type("permission_resolved")
    update = to_update(event)["update"]
    assert update["sessionUpdate"] == "permission_update"
    assert update["modified"] is True
    assert update["state"] == "allowed"


async def test_texts_for_files_outside_the_ask_or_deleted_by_it_are_ignored_and_logged(
    store: SqliteEventStore, caplog: pytest.LogCaptureFixture
) -> None:
    texts = {"/ws/a.py": "x = 'user'\n", "/ws/other.py": "o\n", "/ws/gone.py": "back\n"}
    with caplog.at_level(logging.WARNING, logger="lsp_agent.core.turn.permission_gate"):
        g = await run(store, "write", allow(texts))

    assert isinstance(g.tools, ProposingTools)
    assert g.tools.handed == [{"/ws/a.py": "x = 'user'\n"}]
    logged = caplog.text
    assert "/ws/other.py ignored" in logged
    assert "/ws/gone.py ignored" in logged


async def test_only_files_outside_the_ask_is_no_modification(store: SqliteEventStore) -> None:
    g = await run(store, "write", allow({"/ws/other.py": "o\n"}))

    assert isinstance(g.tools, ProposingTools)
    assert g.tools.handed == [{}]
    assert "modified" not in resolved(g)
    (event,) = g.editor.of_type("permission_resolved")
    assert "modified" not in to_update(event)["update"]


async def test_the_proposal_sent_back_as_it_was_is_no_modification(
    store: SqliteEventStore,
) -> None:
    # the editor's buffer form may add a BOM and CRLF endings
    g = await run(store, "write", allow({"/ws/a.py": "\ufeff" + PROPOSED.replace("\n", "\r\n")}))

    assert isinstance(g.tools, ProposingTools)
    assert g.tools.handed == [{}]
    assert "modified" not in resolved(g)


async def test_a_reject_hands_nothing_on(store: SqliteEventStore) -> None:
    rejected = await run(
        store,
        "write",
        PermissionReply(kind="reject_once", reason="no", modified={"/ws/a.py": "x\n"}),
    )
    assert isinstance(rejected.tools, ProposingTools)
    assert rejected.tools.handed == [{}]
    assert "modified" not in resolved(rejected)


async def test_a_non_edit_ask_hands_nothing_on(store: SqliteEventStore) -> None:
    read = await run(store, "read", allow({"/ws/a.py": "x\n"}))
    assert isinstance(read.tools, ProposingTools)
    assert read.tools.handed == [{}]
    assert "modified" not in resolved(read)
