"""Rewind by scope: ``both`` (files and messages, the default), ``code`` (files only, every
message stays) and ``conversation`` (messages only, no file touched), through stage, clear,
commit and what the model is sent next."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.core.checkpoints import hidden_messages, staged_revert
from lsp_agent.core.errors import RevertBlocked
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.session.service import SessionService
from lsp_agent.core.stream_events import StreamEvent
from lsp_agent.snapshots import GitShadowSnapshots
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.provider import ScriptedProvider
from lsp_agent.wire.updates import to_update
from tests.unit.core.test_revert_documents import MODEL, WriteTools, done, write


class Session:
    """Two turns: the first writes a.py, the second b.py (both closed: on disk)."""

    def __init__(self, store: SqliteEventStore, ws: Path, data: Path) -> None:
        self.store, self.ws = store, ws
        self.editor = RecordingEditor()
        self.snapshots = GitShadowSnapshots(data)
        self.clock, self.ids = FakeClock(), SequentialIds()
        self.provider = ScriptedProvider([])
        self.service = self._service([])
        self.sid = ""

    def _service(self, steps: list[list[StreamEvent]]) -> SessionService:
        self.provider = ScriptedProvider(steps)
        return SessionService(
            store=self.store,
            provider=self.provider,
            tools=WriteTools(self.ws, self.editor),
            editor=self.editor,
            clock=self.clock,
            ids=self.ids,
            options=AgentOptions(model=MODEL, titles=False),
            snapshots=self.snapshots,
        )

    async def turn(self, prompt: str, *steps: list[StreamEvent]) -> str:
        if not self.sid:
            self.sid = await self.service.create(workspace_folder=str(self.ws))
        self.service = self._service(list(steps))
        message_id = await self.service.admit(self.sid, [{"type": "text", "text": prompt}])
        assert (await self.service.run_turn(self.sid)).stop_reason == "end_turn"
        return message_id

    async def two_turns(self) -> tuple[str, str]:
        first = await self.turn("FIRST-PROMPT", write(("a.py", "a = 2\n")), done())
        second = await self.turn("SECOND-PROMPT", write(("b.py", "b = 2\n")), done())
        return first, second

    def sent(self) -> str:
        """What the last model request carried."""
        return repr(self.provider.requests[-1].messages)

    def files(self) -> tuple[str, str]:
        return (self.ws / "a.py").read_text(), (self.ws / "b.py").read_text()


@pytest.fixture
def session(store: SqliteEventStore, ws: Path, tmp_path: Path) -> Session:
    (ws / "a.py").write_text("a = 1\n")
    (ws / "b.py").write_text("b = 1\n")
    return Session(store, ws, tmp_path / "data")


async def test_code_restores_the_files_and_hides_no_message(session: Session) -> None:
    first, second = await session.two_turns()

    result = await session.service.revert_stage(session.sid, first, scope="code")

    assert result.files == ("a.py", "b.py")
    assert session.files() == ("a = 1\n", "b = 1\n")
    events = await session.store.events(session.sid)
    assert hidden_messages(events) == frozenset()
    [staged] = session.editor.of_type("revert_staged")
    assert staged.data["scope"] == "code"
    assert staged.data["hidden"] == []
    update = to_update(staged)["update"]
    assert update["sessionUpdate"] == "revert_update"
    assert update["scope"] == "code"
    assert update["files"] == ["a.py", "b.py"]

    # a new prompt commits it, drops nothing, and the model still has the whole conversation
    await session.turn("THIRD-PROMPT", done())
    [committed] = session.editor.of_type("revert_committed")
    assert committed.data["dropped"] == []
    assert to_update(committed)["update"]["scope"] == "code"
    assert "FIRST-PROMPT" in session.sent()
    assert "SECOND-PROMPT" in session.sent()
    assert session.files() == ("a = 1\n", "b = 1\n")
    assert second in [m.message_id for m in await session.store.transcript(session.sid)]


async def test_after_a_code_rewind_the_model_is_told_once_which_files_went_back(
    session: Session,
) -> None:
    first, _second = await session.two_turns()
    await session.service.revert_stage(session.sid, first, scope="code")

    await session.turn("THIRD-PROMPT", done())
    told = session.sent()
    assert "The user rewound the code" in told
    assert "a.py, b.py" in told
    [note] = [
        e
        for e in await session.store.events(session.sid)
        if e.type == "context_noted" and e.data.get("codeRewinds")
    ]

    # the note is stored once: the next turn sends it again as history, and adds none
    await session.turn("FOURTH-PROMPT", done())
    notes = [
        e
        for e in await session.store.events(session.sid)
        if e.type == "context_noted" and e.data.get("codeRewinds")
    ]
    assert notes == [note]
    assert session.sent().count("The user rewound the code") == 1


async def test_a_cleared_code_rewind_tells_the_model_nothing(session: Session) -> None:
    first, _second = await session.two_turns()
    await session.service.revert_stage(session.sid, first, scope="code")
    await session.service.revert_clear(session.sid)

    await session.turn("THIRD-PROMPT", done())

    assert "The user rewound the code" not in session.sent()


async def test_code_cleared_puts_the_files_back(session: Session) -> None:
    first, _ = await session.two_turns()
    await session.service.revert_stage(session.sid, first, scope="code")

    await session.service.revert_clear(session.sid)

    assert session.files() == ("a = 2\n", "b = 2\n")
    [cleared] = session.editor.of_type("revert_cleared")
    assert to_update(cleared)["update"]["scope"] == "code"


async def test_conversation_hides_the_messages_and_touches_no_file(session: Session) -> None:
    _, second = await session.two_turns()
    before = {p: (session.ws / p).stat().st_mtime_ns for p in ("a.py", "b.py")}

    result = await session.service.revert_stage(session.sid, second, scope="conversation")

    assert result.files == ()
    assert result.conflicts == ()
    assert session.files() == ("a = 2\n", "b = 2\n")
    assert {p: (session.ws / p).stat().st_mtime_ns for p in before} == before
    events = await session.store.events(session.sid)
    assert second in hidden_messages(events)
    staged = staged_revert(events)
    assert staged is not None
    assert staged.scope == "conversation"
    [event] = session.editor.of_type("revert_staged")
    assert event.data["files"] == []
    assert to_update(event)["update"]["scope"] == "conversation"

    await session.turn("THIRD-PROMPT", done())
    [committed] = session.editor.of_type("revert_committed")
    assert second in committed.data["dropped"]
    assert "FIRST-PROMPT" in session.sent()
    assert "SECOND-PROMPT" not in session.sent()
    assert session.files() == ("a = 2\n", "b = 2\n")  # the files as the agent left them


async def test_conversation_cleared_shows_the_messages_again_and_touches_no_file(
    session: Session,
) -> None:
    _, second = await session.two_turns()
    await session.service.revert_stage(session.sid, second, scope="conversation")
    (session.ws / "b.py").write_text("b = 'user'\n")  # the user goes on editing

    result = await session.service.revert_clear(session.sid)

    assert result.files == ()
    assert (session.ws / "b.py").read_text() == "b = 'user'\n"
    assert hidden_messages(await session.store.events(session.sid)) == frozenset()


async def test_both_is_the_default_and_does_both(session: Session) -> None:
    _, second = await session.two_turns()

    await session.service.revert_stage(session.sid, second)

    assert session.files() == ("a = 2\n", "b = 1\n")
    events = await session.store.events(session.sid)
    assert second in hidden_messages(events)
    [staged] = session.editor.of_type("revert_staged")
    assert staged.data["scope"] == "both"
    assert to_update(staged)["update"]["scope"] == "both"


async def test_an_unknown_scope_is_refused(session: Session) -> None:
    first, _ = await session.two_turns()

    with pytest.raises(RevertBlocked, match="unknown revert scope"):
        await session.service.revert_stage(session.sid, first, scope="files")  # type: ignore[arg-type]
    assert session.files() == ("a = 2\n", "b = 2\n")


def test_a_revert_staged_before_scopes_existed_is_both() -> None:
    old = StoredEvent(
        session_id="s",
        seq=1,
        type="revert_staged",
        data={
            "messageId": "m",
            "restoreTree": "",
            "undoTree": "",
            "files": [],
            "conflicts": [],
            "hidden": ["m"],
        },
        time="2026-01-01T00:00:00.000Z",
        version=1,
    )
    staged = staged_revert([old])
    assert staged is not None
    assert staged.scope == "both"
    assert hidden_messages([old]) == frozenset({"m"})
    assert to_update(old)["update"]["scope"] == "both"
