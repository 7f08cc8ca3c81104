"""SessionService: the core's front door for every adapter (CLI, language server, tests).

Input is admitted (made durable) before anything else happens; a turn then promotes it
into the conversation and runs the loop. Titles are made on the side and never block.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

import attrs

from lsp_agent.core import prompts
from lsp_agent.core.checkpoints import (
    SnapshotStore,
    checkpoints,
    hidden_messages,
    messages_from,
    staged_revert,
    user_message_ids,
)
from lsp_agent.core.clock import iso_time
from lsp_agent.core.compaction import CompactionPolicy, latest_checkpoint
from lsp_agent.core.compactor import Compactor
from lsp_agent.core.context import ContextSources, SourcesSnapshot, current_epoch
from lsp_agent.core.errors import RevertBlocked, SessionNotFound
from lsp_agent.core.events import EventType, NewEvent
from lsp_agent.core.gate import PermissionGate
from lsp_agent.core.interfaces import Clock, Editor, EventStore, IdFactory, Provider, ToolExecutor
from lsp_agent.core.loop import TurnConfig, TurnOutcome, TurnRunner
from lsp_agent.core.messages import ThinkingConfig
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.permission import Rule
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.retry import RetryPolicy
from lsp_agent.core.secrets import NO_SECRETS, SecretFilter
from lsp_agent.core.title import generate_title
from lsp_agent.core.tooling import SubtaskResult
from lsp_agent.core.transcript import SessionInfo, TextPartView


@attrs.frozen(kw_only=True)
class AgentOptions:
    """The settings the core reads, already resolved by the composition root."""

    model: ModelInfo
    mode: str = "build"
    max_steps: int = 50
    retry: RetryPolicy = RetryPolicy()
    thinking: ThinkingConfig | None = None
    titles: bool = True
    rules: tuple[Rule, ...] = ()
    """Configured permission rules, in order (the mode's rules are added per call)."""
    secrets: SecretFilter = NO_SECRETS
    compaction: CompactionPolicy = CompactionPolicy()


@attrs.frozen(kw_only=True)
class RevertResult:
    files: tuple[str, ...]
    conflicts: tuple[str, ...]


class FoldersOnly:
    """Context sources for hosts that give none: the workspace folders and the platform."""

    async def collect(self, workspace_roots: Sequence[str], *, full: bool) -> SourcesSnapshot:
        return SourcesSnapshot(workspace_roots=tuple(workspace_roots), platform=sys.platform)


SUBAGENTS = frozenset({"general", "explore"})
PROMPT_OF_MODE = {"build": "build", "plan": "plan", "general": "build", "explore": "explore"}


class SessionService:
    def __init__(
        self,
        *,
        store: EventStore,
        provider: Provider,
        tools: ToolExecutor,
        editor: Editor,
        clock: Clock,
        ids: IdFactory,
        options: AgentOptions,
        sources: ContextSources | None = None,
        snapshots: SnapshotStore | None = None,
    ) -> None:
        """``sources`` feed the baseline note (instructions, skills, git); none: folders only."""
        self._store = store
        self._provider = provider
        self._tools = tools
        self._editor = editor
        self._clock = clock
        self._ids = ids
        self._options = options
        self._sources = sources or FoldersOnly()
        self._snapshots = snapshots
        self._background: set[asyncio.Task[None]] = set()

    async def create(
        self,
        *,
        workspace_folder: str,
        title: str = "",
        mode: str | None = None,
        parent_session_id: str | None = None,
    ) -> str:
        """A new, empty session; ``workspace_folder`` is an absolute, realpath-ed folder."""
        session_id = self._ids.new("ses")
        data = {
            "sessionId": session_id,
            "workspaceFolder": _file_uri(workspace_folder),
            "title": title,
            "model": self._options.model.ref,
            "mode": mode or self._options.mode,
        }
        if parent_session_id is not None:
            data["parentSessionId"] = parent_session_id
        event = NewEvent(type="session_created", data=data, time=iso_time(self._clock.now()))
        for stored in await self._store.append(session_id, [event]):
            await self._editor.publish(stored)
        return session_id

    async def admit(
        self,
        session_id: str,
        content: list[dict[str, Any]],
        *,
        client_message_id: str | None = None,
    ) -> str:
        """Make the input durable and return its message id (idempotent per client id).

        A staged revert is committed first: a new prompt makes it final."""
        await self._require(session_id)
        if staged_revert(await self._store.events(session_id)) is not None:
            await self.revert_commit(session_id)
        if client_message_id is not None:
            existing = await self._store.find_admitted(session_id, client_message_id)
            if existing is not None:
                return existing
        message_id = self._ids.new("msg")
        data: dict[str, Any] = {"messageId": message_id, "content": content}
        if client_message_id is not None:
            data["clientMessageId"] = client_message_id
        event = NewEvent(type="user_message_admitted", data=data, time=iso_time(self._clock.now()))
        for stored in await self._store.append(session_id, [event]):
            await self._editor.publish(stored)
        return message_id

    async def run_turn(
        self, session_id: str, *, max_steps: int | None = None, mode: str | None = None
    ) -> TurnOutcome:
        """Promote pending input and run the loop until the model stops (or a limit).

        ``mode`` overrides the session's own mode for this turn.
        """
        info = await self._require(session_id)
        mode = mode or info.mode
        recorder = Recorder(
            session_id=session_id, store=self._store, editor=self._editor, clock=self._clock
        )
        folder = _path_of(info.workspace_folder)
        start_title = None
        if self._options.titles and not info.title:
            start_title = await self._title_starter(session_id, recorder)

        async def subtask(description: str, prompt: str, agent: str) -> SubtaskResult:
            return await self._run_subtask(session_id, folder, description, prompt, agent)

        runner = TurnRunner(
            session_id=session_id,
            config=self._turn_config(folder, max_steps, mode),
            store=self._store,
            provider=self._provider,
            tools=self._tools,
            recorder=recorder,
            clock=self._clock,
            ids=self._ids,
            gate=PermissionGate(
                session_id=session_id,
                mode=mode,
                store=self._store,
                editor=self._editor,
                recorder=recorder,
            ),
            editor=self._editor,
            sources=self._sources,
            snapshots=self._snapshots,
            subtasks=subtask,
            on_first_answer=start_title,
        )
        try:
            return await runner.run()
        finally:
            await recorder.close()

    async def compact(self, session_id: str) -> bool:
        """Manual compaction of an idle session; False when there was nothing to compact."""
        info = await self._require(session_id)
        events = await self._store.events(session_id)
        epoch = current_epoch(events)
        recorder = Recorder(
            session_id=session_id, store=self._store, editor=self._editor, clock=self._clock
        )
        compactor = Compactor(
            session_id=session_id,
            store=self._store,
            provider=self._provider,
            recorder=recorder,
            clock=self._clock,
            sources=self._sources,
            model=self._options.model,
            keep_recent_tokens=self._options.compaction.keep_recent_tokens,
            workspace_roots=(_path_of(info.workspace_folder),),
        )
        try:
            done = await compactor.run(
                latest_checkpoint(events),
                epoch.number if epoch is not None else 0,
                auto=False,
                reason="manual",
            )
        finally:
            await recorder.close()
        return done is not None

    # -- revert --------------------------------------------------------------------------

    async def revert_stage(
        self, session_id: str, message_id: str, *, force: bool = False
    ) -> RevertResult:
        """Files back to before ``message_id``; it and later messages are hidden.

        A file the user changed after the agent's last step is a conflict and is left alone
        unless ``force``."""
        info = await self._require(session_id)
        events = await self._store.events(session_id)
        if staged_revert(events) is not None:
            await self.revert_clear(session_id)
            events = await self._store.events(session_id)
        later = messages_from(await self._store.transcript(session_id), message_id)
        if not later or message_id not in user_message_ids(events):
            raise RevertBlocked(f"no user message {message_id!r} in session {session_id}")
        steps = [c for c in checkpoints(events) if c.message_id in later]
        root = Path(_path_of(info.workspace_folder))
        files = sorted({p for c in steps for p in c.paths})
        conflicts: list[str] = []
        restore_tree = undo_tree = ""
        if steps and self._snapshots is not None:
            restore_tree = steps[0].before
            conflicts = await self._snapshots.changed_since(root, steps[-1].after, files)
            undo_tree = await self._snapshots.track(root)
            chosen = files if force else [p for p in files if p not in conflicts]
            if chosen:
                await self._snapshots.restore(root, restore_tree, chosen)
        await self._emit(
            session_id,
            "revert_staged",
            {
                "messageId": message_id,
                "restoreTree": restore_tree,
                "undoTree": undo_tree,
                "files": files,
                "conflicts": [] if force else conflicts,
                "hidden": later,
            },
        )
        return RevertResult(files=tuple(files), conflicts=tuple([] if force else conflicts))

    async def revert_clear(self, session_id: str) -> None:
        """Undo the staged revert: files and messages back as they were."""
        info = await self._require(session_id)
        staged = staged_revert(await self._store.events(session_id))
        if staged is None:
            return
        if staged.undo_tree and staged.files and self._snapshots is not None:
            root = Path(_path_of(info.workspace_folder))
            await self._snapshots.restore(root, staged.undo_tree, list(staged.files))
        await self._emit(
            session_id,
            "revert_cleared",
            {"messageId": staged.message_id, "files": list(staged.files)},
        )

    async def revert_commit(self, session_id: str) -> tuple[str, ...]:
        """Make the staged revert final: the hidden messages are dropped from the session."""
        staged = staged_revert(await self._store.events(session_id))
        if staged is None:
            return ()
        await self._emit(
            session_id,
            "revert_committed",
            {"messageId": staged.message_id, "dropped": list(staged.hidden)},
        )
        return staged.hidden

    async def undo(self, session_id: str) -> tuple[str, list[dict[str, Any]]]:
        """Stage a revert of the last user message; its prompt goes back to the input box."""
        events = await self._store.events(session_id)
        hidden = hidden_messages(events)
        candidates = [m for m in user_message_ids(events) if m not in hidden]
        if not candidates:
            raise RevertBlocked(f"session {session_id} has nothing to undo")
        message_id = candidates[-1]
        await self.revert_stage(session_id, message_id)
        return message_id, await self._store.inbox_content(message_id)

    async def _emit(self, session_id: str, type_: EventType, data: dict[str, Any]) -> None:
        event = NewEvent(type=type_, data=data, time=iso_time(self._clock.now()))
        for stored in await self._store.append(session_id, [event]):
            await self._editor.publish(stored)

    async def drain(self, timeout: float) -> None:
        """Give side work (titles) up to ``timeout`` seconds to finish, then stop it."""
        if not self._background:
            return
        _, pending = await asyncio.wait(self._background, timeout=timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def _run_subtask(
        self, parent: str, folder: str, description: str, prompt: str, agent: str
    ) -> SubtaskResult:
        """A child session with its own log and the agent's restricted tools, run to its end."""
        if agent not in SUBAGENTS:
            known = ", ".join(sorted(SUBAGENTS))
            error = f"Unknown agent type {agent!r}; available: {known}."
            return SubtaskResult(session_id="", text="", stop_reason="error", error=error)
        child = await self.create(
            workspace_folder=folder,
            title=f"{description} (@{agent} subagent)",
            mode=agent,
            parent_session_id=parent,
        )
        await self.admit(child, [{"type": "text", "text": prompt}])
        outcome = await self.run_turn(child)
        transcript = await self._store.transcript(child)
        texts = [
            part.text
            for message in transcript
            if message.role == "assistant" and message.status == "completed"
            for part in message.parts
            if isinstance(part, TextPartView) and part.type == "text"
        ]
        return SubtaskResult(
            session_id=child,
            text=texts[-1] if texts else "",
            stop_reason=outcome.stop_reason,
            error=str(outcome.error) if outcome.error is not None else None,
        )

    def _turn_config(self, folder: str, max_steps: int | None, mode: str) -> TurnConfig:
        options = self._options
        return TurnConfig(
            model=options.model,
            system_prompt=prompts.load(PROMPT_OF_MODE.get(mode, "build")),
            workspace_roots=(folder,),
            max_steps=max_steps if max_steps is not None else options.max_steps,
            retry=options.retry,
            thinking=options.thinking,
            mode=mode,
            rules=options.rules,
            secrets=options.secrets,
            compaction=options.compaction,
        )

    async def _title_starter(
        self, session_id: str, recorder: Recorder
    ) -> Callable[[], None] | None:
        """A callback that starts the title side request for the first pending prompt."""
        pending = await self._store.pending_inputs(session_id)
        if not pending:
            return None
        blocks = await self._store.inbox_content(pending[0])
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        if not text.strip():
            return None

        async def make_title() -> None:
            title = await generate_title(self._provider, self._options.model.model, text)
            if title:
                await recorder.emit("title_set", {"title": title})

        def start() -> None:
            task = asyncio.create_task(make_title())
            self._background.add(task)
            task.add_done_callback(self._background.discard)

        return start

    async def _require(self, session_id: str) -> SessionInfo:
        info = await self._store.session(session_id)
        if info is None:
            raise SessionNotFound(session_id)
        return info


def _file_uri(path: str) -> str:
    return PurePosixPath(path).as_uri()


def _path_of(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri
