"""What ``lsp-agent acp`` holds: the runtime (store, an agent per workspace, turns) and the
client's open sessions (issue 23 §2, §3, §8).

ACP sessions are ordinary sessions: created, stored and listed by the runtime as
``serve``'s and ``run``'s (``sessions list`` shows them). A session's ``cwd`` is its
workspace folder (the wall) and ``additionalDirectories`` join it as roots; the runtime
builds the agent for a folder the first time a session works there (its project
configuration applies), and it serves every session in that folder.

One turn at a time per session: ``session/prompt`` admits the input, runs the turn in a
task of its own with :data:`~lsp_agent.acp.editor.PROMPTING` set to the session, claimed as
the session's turn in the runtime, and answers its stop reason; ``session/cancel`` cancels
that task (the running tool is interrupted, its process group killed, the turn recorded as
cancelled) and the prompt answers ``cancelled``.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from acp.schema import (
    ClientCapabilities,
    SessionMode,
    SessionModeState,
)
from acp.schema import (
    SessionInfo as AcpSessionInfo,
)

from lsp_agent.acp.capabilities import ClientFeatures
from lsp_agent.acp.code_review import REVIEW_COMMAND, REVIEW_ENTRY, review_answer
from lsp_agent.acp.content import PromptBlock, user_content
from lsp_agent.acp.editor import PROMPTING, AcpEditor
from lsp_agent.acp.peer import AcpPeer, PeerTimeouts
from lsp_agent.acp.session_mcp import ClientServer, InvalidServers, SessionServers
from lsp_agent.acp.until import UNTIL_COMMAND, UNTIL_ENTRY, until_goal
from lsp_agent.acp.updates import UpdateMapper, config_options
from lsp_agent.app import AgentInputs, App
from lsp_agent.core.errors import InvalidParams, SessionNotFound
from lsp_agent.core.events import (
    AssistantMessageEnded,
    PermissionResolved,
    message_id_of,
    of_type,
)
from lsp_agent.core.modes import CLIENT_MODES, MODES
from lsp_agent.core.session.config_options import ConfigChoices
from lsp_agent.core.uris import local_path
from lsp_agent.runtime.host import AgentPlan, Runtime
from lsp_agent.runtime.until import run_until

_log = logging.getLogger(__name__)

COMPACT_COMMAND = "compact"
COMMANDS = (
    {
        "name": COMPACT_COMMAND,
        "description": "Summarize the older part of the conversation now (frees context)",
    },
    REVIEW_ENTRY,
    UNTIL_ENTRY,
)
_STOP_REASONS = {
    "end_turn": "end_turn",
    "max_steps": "max_turn_requests",
    "refusal": "refusal",
    "cancelled": "cancelled",
}


@attrs.define
class OpenSession:
    session_id: str
    app: App
    folder: str
    roots: tuple[str, ...]
    servers_started: bool = False


@attrs.frozen(kw_only=True)
class SessionSetup:
    """What ``session/new``, ``load`` and ``resume`` answer besides the session id."""

    modes: SessionModeState
    config_options: list[dict[str, Any]]


class AcpHost:
    def __init__(self, *, peer: AcpPeer, env: Mapping[str, str], runtime: Runtime) -> None:
        """``runtime``: made with this host's :meth:`plan` (see :meth:`open`)."""
        self.peer = peer
        self.env = env
        self.runtime = runtime
        self._open: dict[str, OpenSession] = {}
        self.editor = AcpEditor(peer, visible=lambda session_id: session_id in self._open)
        self.servers = SessionServers(env=env)
        runtime.on_close(self.servers.aclose)

    @classmethod
    async def open(cls, *, peer: AcpPeer, env: Mapping[str, str]) -> AcpHost:
        runtime = await Runtime.open(env, plan=lambda folder: host.plan(folder))
        host = cls(peer=peer, env=env, runtime=runtime)
        return host

    # -- initialize ------------------------------------------------------------------------

    def initialize(self, capabilities: ClientCapabilities | None) -> None:
        self.peer.features = ClientFeatures.of(capabilities)
        self._client_extras()

    def _client_extras(self) -> None:
        """What the client's capabilities add: questions through elicitation (H4b)."""
        if self.peer.features.elicitation_form:
            from lsp_agent.acp.elicitation import ElicitationAsker

            self.editor.questions = ElicitationAsker(self.peer)

    def plan(self, folder: str) -> AgentPlan:
        """How the runtime makes the agent for ``folder``."""
        return AgentPlan(
            inputs=self._agent_inputs(folder),
            editor=self.editor,
            roots=self._roots_for,
            ready=self._adopt,
        )

    def _adopt(self, app: App) -> None:
        """A new agent also runs the sessions' own MCP servers' tools; its timeouts apply."""
        if app.tools is not None:
            app.tools.add_source(self.servers)
        editor_settings = app.settings.editor
        self.peer.timeouts = PeerTimeouts(
            ask=editor_settings.ask_timeout, request=editor_settings.request_timeout
        )

    def _agent_inputs(self, folder: str) -> AgentInputs:
        """The agent's inputs for a folder: bash in the client's terminal when it has one."""
        runner = None
        if self.peer.features.terminal:
            from lsp_agent.acp.terminal import ClientTerminalRunner

            runner = ClientTerminalRunner(
                self.peer,
                attached=lambda session_id, call_id, terminal_id: self.editor.mapper(
                    session_id
                ).note_terminal(call_id, terminal_id),
            )
        return AgentInputs(workspace=Path(folder), env=self.env, command_runner=runner)

    # -- sessions --------------------------------------------------------------------------

    async def new_session(
        self, cwd: str, additional: Sequence[str] | None, servers: Sequence[ClientServer]
    ) -> tuple[str, SessionSetup]:
        folder = _folder(cwd, "cwd")
        roots = _roots(folder, additional)
        app = await self.runtime.agent(folder)
        session_id = await self.runtime.create(folder)
        await self._open_session(session_id, app, folder, roots, servers)
        return session_id, await self._setup(session_id)

    async def load_session(
        self,
        session_id: str,
        cwd: str,
        additional: Sequence[str] | None,
        servers: Sequence[ClientServer] | None,
        *,
        replay: bool,
    ) -> SessionSetup:
        """``session/load`` (``replay``: the whole conversation is sent as updates first)
        and ``session/resume`` (no replay)."""
        _folder(cwd, "cwd")
        info = await self.runtime.sessions.require(session_id)
        folder = local_path(info.workspace_folder)
        app = await self.runtime.agent(folder)
        self.runtime.turns.check_idle(session_id)
        self._open.pop(session_id, None)
        self.editor.forget(session_id)
        if replay:
            await self._replay(session_id, folder)
        await self._open_session(session_id, app, folder, _roots(folder, additional), servers or ())
        return await self._setup(session_id)

    async def _open_session(
        self,
        session_id: str,
        app: App,
        folder: str,
        roots: tuple[str, ...],
        servers: Sequence[ClientServer],
    ) -> None:
        reserved: set[str] = set(app.tools.names if app.tools is not None else ())
        if app.mcp is not None:
            reserved |= {spec.name for spec in app.mcp.specs()}
        try:
            await self.servers.start(session_id, servers, reserved=reserved, avoid=roots)
        except InvalidServers as error:
            raise InvalidParams(str(error)) from error
        self.editor.track(session_id, cwd=folder)
        self._open[session_id] = OpenSession(
            session_id=session_id, app=app, folder=folder, roots=roots
        )

    async def _replay(self, session_id: str, folder: str) -> None:
        """Every visible message of the stored session, as the updates a live turn sent."""
        sessions = self.runtime.sessions
        visible = {m.message_id for m in await sessions.transcript(session_id)}
        mapper = UpdateMapper(cwd=folder, replay=True)
        for event in await sessions.events(session_id):
            message_id = message_id_of(event.event)
            if message_id is not None and message_id not in visible:
                continue  # reverted, or never promoted
            for update in mapper.updates(event):
                await self.editor.send_update(session_id, update)

    async def _setup(self, session_id: str) -> SessionSetup:
        session = self._require(session_id)
        choices = await session.app.sessions.config_options(session_id)
        return SessionSetup(modes=modes(choices), config_options=config_options(choices.to_json()))

    async def announce(self, session_id: str) -> None:
        """``available_commands_update``, after the answer that made the session known."""
        await asyncio.sleep(0)
        if session_id in self._open:
            await self.editor.send_update(
                session_id,
                {"sessionUpdate": "available_commands_update", "availableCommands": COMMANDS},
            )

    async def list_sessions(
        self, cwd: str | None, cursor: str | None
    ) -> tuple[list[AcpSessionInfo], str | None]:
        folder = _folder(cwd, "cwd") if cwd is not None else None
        page = await self.runtime.sessions.page(folder, cursor, None)
        listed = [
            AcpSessionInfo.model_validate(
                {
                    "sessionId": info.session_id,
                    "cwd": local_path(info.workspace_folder),
                    "title": info.title or None,
                    "updatedAt": info.updated_at,
                }
            )
            for info in page.sessions
        ]
        return listed, page.next_cursor

    async def close_session(self, session_id: str) -> None:
        session = self._open.get(session_id)
        if session is None:
            await self.runtime.sessions.require(session_id)  # unknown → SessionNotFound
            return  # known but closed: ok
        await self.runtime.turns.cancel(session_id)
        self._open.pop(session_id, None)
        self.editor.forget(session_id)
        await self.servers.stop(session_id)

    async def set_config(self, session_id: str, config_id: str, value: str) -> list[dict[str, Any]]:
        session = self._require(session_id)
        choices = await session.app.sessions.set_config(session_id, config_id, value)
        return config_options(choices.to_json())

    # -- prompts ---------------------------------------------------------------------------

    async def prompt(self, session_id: str, blocks: list[PromptBlock]) -> str:
        """Run one prompt to its end; the ACP stop reason."""
        session = self._require(session_id)
        self.runtime.turns.check_idle(session_id)
        content = user_content(blocks)
        context = contextvars.copy_context()
        context.run(PROMPTING.set, session_id)
        task = asyncio.create_task(self._run(session, content), context=context)
        self.runtime.turns.claim(session_id, task)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                task.cancel()  # the prompt's own request went away (the connection closes)
                raise
            return "cancelled"

    async def _run(self, session: OpenSession, content: list[dict[str, Any]]) -> str:
        sessions = session.app.sessions
        session_id = session.session_id
        if not session.servers_started:
            await self.servers.settled(session_id)
            session.servers_started = True
        command = _command(content)
        if command == COMPACT_COMMAND:
            done = await sessions.compact(session_id)
            text = "Compacted the conversation." if done else "There was nothing to compact."
            await self._say(session_id, text)
            return "end_turn"
        if command == REVIEW_COMMAND:
            said = str(content[0].get("text", ""))
            text = await review_answer(session.app, session.folder, session.roots, said)
            await self._say(session_id, text)
            return "end_turn"
        goal = None
        if command == UNTIL_COMMAND:
            parsed = until_goal(str(content[0].get("text", "")))
            if isinstance(parsed, str):
                await self._say(session_id, parsed)
                return "end_turn"
            goal, task = parsed
            content = [{"type": "text", "text": task}]
        first_seq = await self.runtime.sessions.last_seq(session_id)
        await sessions.admit(session_id, content)
        if goal is None:
            outcome = await sessions.run_turn(session_id)
        else:  # each check reaches the client as the until_checked event's line
            outcome, _check = await run_until(
                session.app,
                await self.runtime.sessions.require(session_id),
                goal,
                run_turn=lambda _info: sessions.run_turn(session_id),
                read=self.runtime.sessions.require,
                report=lambda _check: None,
            )
        if outcome.stop_reason == "error":
            error = outcome.error or RuntimeError("the turn failed")
            # in the conversation too: many clients only log a prompt's error response
            text = f"\n\n**Error:** {error}\n"
            await self._say(session_id, text)
            raise error
        stop = _STOP_REASONS.get(outcome.stop_reason, "end_turn")
        if stop == "end_turn" and await self._hit_max_tokens(session_id, first_seq):
            return "max_tokens"
        if stop == "cancelled" and await self._user_refused(session_id, first_seq):
            return "refusal"
        return stop

    async def _say(self, session_id: str, text: str) -> None:
        """A line of the agent's answer that no model wrote (a slash command's, an error)."""
        await self.editor.send_update(
            session_id,
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
        )

    async def _user_refused(self, session_id: str, after_seq: int) -> bool:
        """The turn ended because the user rejected a call without a reason (not because
        an ask was dismissed): ACP's ``cancelled`` is for ``session/cancel`` only, so that
        turn ends as a ``refusal``. The model reads the rejection at its next turn."""
        events = await self.runtime.sessions.events(session_id, after_seq=after_seq)
        resolved = of_type(events, PermissionResolved)
        return bool(resolved) and resolved[-1].state == "rejected"

    async def _hit_max_tokens(self, session_id: str, after_seq: int) -> bool:
        events = await self.runtime.sessions.events(session_id, after_seq=after_seq)
        ended = of_type(events, AssistantMessageEnded)
        return bool(ended) and ended[-1].finish_reason == "max_tokens"

    async def cancel(self, session_id: str) -> None:
        """``session/cancel``: stop the running prompt (nothing happens when idle)."""
        await self.runtime.turns.cancel(session_id, wait=False)

    # -- the agents ------------------------------------------------------------------------

    def _roots_for(self, folder: str) -> Sequence[str]:
        """The prompting session's roots (its folder and additional directories)."""
        session = self._open.get(PROMPTING.get())
        if session is not None and session.folder == folder:
            return session.roots
        return (folder,)

    def _require(self, session_id: str) -> OpenSession:
        session = self._open.get(session_id)
        if session is None:
            raise SessionNotFound(session_id)
        return session

    async def stop_turns(self) -> None:
        """Cancel every running turn and wait until each has recorded its end."""
        await self.runtime.turns.aclose()

    async def aclose(self) -> None:
        """The runtime's shutdown order (the sessions' MCP servers stop after the turns)."""
        await self.runtime.aclose()


def modes(choices: ConfigChoices) -> SessionModeState:
    """The legacy ``modes`` (``session/set_mode``) beside ``configOptions``."""
    return SessionModeState(
        current_mode_id=choices.mode,
        available_modes=[
            SessionMode(id=name, name=MODES[name].title, description=MODES[name].description)
            for name in CLIENT_MODES
        ],
    )


def _folder(path: str | None, field: str) -> str:
    if not path or not os.path.isabs(path):
        raise InvalidParams(f"{field}: an absolute path is required, got {path!r}")
    real = os.path.realpath(path)
    if not os.path.isdir(real):
        raise InvalidParams(f"{field}: {path} is not a folder")
    return real


def _roots(folder: str, additional: Sequence[str] | None) -> tuple[str, ...]:
    extra = [_folder(path, "additionalDirectories") for path in additional or ()]
    return tuple(dict.fromkeys([folder, *extra]))


def _command(content: list[dict[str, Any]]) -> str | None:
    """The slash command a prompt is (``/compact``), or None for an ordinary prompt."""
    if len(content) != 1 or content[0].get("type") != "text":
        return None
    text = str(content[0].get("text", "")).strip()
    if not text.startswith("/"):
        return None
    name = text[1:].split(maxsplit=1)[0] if len(text) > 1 else ""
    return name if name in {c["name"] for c in COMMANDS} else None
