"""SessionService: the core's front door for every adapter (CLI, language server, tests).

Input is admitted (made durable) before anything else happens; a turn then promotes it
into the conversation and runs the loop. Titles are made on the side and never block.

Each session has a mode and a model (its ``configOptions``); ``set_config`` changes them with a
``config_changed`` event, and a running turn picks the change up at its next step.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

import attrs

from lsp_agent.core import prompts
from lsp_agent.core.checkpoints import (
    SnapshotStore,
    checkpoints,
    hidden_messages,
    in_buffer_form,
    messages_from,
    open_in,
    staged_revert,
    user_message_ids,
)
from lsp_agent.core.clock import iso_time
from lsp_agent.core.compaction import CompactionPolicy, latest_checkpoint
from lsp_agent.core.compactor import Compactor
from lsp_agent.core.context import ContextSources, SourcesSnapshot, current_epoch
from lsp_agent.core.errors import InvalidConfigValue, RevertBlocked, SessionNotFound
from lsp_agent.core.events import EventType, NewEvent
from lsp_agent.core.gate import PermissionGate
from lsp_agent.core.interfaces import Clock, Editor, EventStore, IdFactory, Provider, ToolExecutor
from lsp_agent.core.loop import TurnConfig, TurnOutcome, TurnRunner
from lsp_agent.core.messages import ThinkingConfig
from lsp_agent.core.models import ModelCatalog, ModelChoice, ModelInfo, SingleModel
from lsp_agent.core.permission import Rule, SubagentScope, subagent_scope
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
    compaction_for: Callable[[ModelInfo], CompactionPolicy] | None = None
    """The policy for another model a session switches to (default: ``compaction``)."""

    def compaction_of(self, model: ModelInfo) -> CompactionPolicy:
        if self.compaction_for is None or model == self.model:
            return self.compaction
        return self.compaction_for(model)


@attrs.frozen(kw_only=True)
class RevertResult:
    files: tuple[str, ...]
    """Every file the reverted steps changed (relative to the workspace folder)."""
    conflicts: tuple[str, ...]
    """The files left untouched: changed by the user since the agent's step (unless
    ``force``), or an open document the editor did not change."""
    reasons: dict[str, str] = attrs.field(factory=dict)
    """Why each conflict was left alone."""


class FoldersOnly:
    """Context sources for hosts that give none: the workspace folders and the platform."""

    async def collect(self, workspace_roots: Sequence[str], *, full: bool) -> SourcesSnapshot:
        return SourcesSnapshot(workspace_roots=tuple(workspace_roots), platform=sys.platform)


_log = logging.getLogger(__name__)

SUBAGENTS = frozenset({"general", "explore"})
PROMPT_OF_MODE = {"build": "build", "plan": "plan", "general": "build", "explore": "explore"}

#: The modes a client may choose: value → (name, description).
MODES: dict[str, tuple[str, str]] = {
    "build": ("Build", "Works on the code: reads, edits files and runs commands."),
    "plan": ("Plan", "Investigates and proposes a plan; no file edits, every command asked."),
}
CONFIG_IDS = ("mode", "model")


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
        models: ModelCatalog | None = None,
        roots: Callable[[str], Sequence[str]] | None = None,
    ) -> None:
        """``sources`` feed the baseline note (instructions, skills, git); none: folders only.

        ``roots`` gives the folders a session working in ``folder`` may touch (an editor's
        workspace folders, multi-root; asked again at every step, so added or removed folders
        apply from the next step); without it, just the session's own folder.

        ``models`` are the models sessions may switch to; without it the only one is
        ``options.model`` on ``provider`` (the default of every new session either way).
        """
        self._store = store
        self._provider = provider
        self._models = models
        self._roots = roots
        self._tools = tools
        self._editor = editor
        self._clock = clock
        self._ids = ids
        self._options = options
        self._sources = sources or FoldersOnly()
        self._snapshots = snapshots
        self._background: set[asyncio.Task[None]] = set()
        self._config_changes: dict[str, int] = {}
        """``set_config`` calls per session: a running turn re-reads the session only when
        this moved (one query per step saved)."""

    async def create(
        self,
        *,
        workspace_folder: str,
        title: str = "",
        mode: str | None = None,
        parent_session_id: str | None = None,
        model: str | None = None,
    ) -> str:
        """A new, empty session; ``workspace_folder`` is an absolute, realpath-ed folder.

        ``mode`` (build or plan) and ``model`` (a ``provider/model`` the catalog resolves)
        default to the configured ones; anything else raises ``InvalidConfigValue``.
        """
        if mode is not None and mode not in SUBAGENTS:
            _check_mode(mode)
        if model is not None:
            _check_model_ref(model)
            self._catalog().resolve(model)
        session_id = self._ids.new("ses")
        data = {
            "sessionId": session_id,
            "workspaceFolder": _file_uri(workspace_folder),
            "title": title,
            "model": model or self._options.model.ref,
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
        self,
        session_id: str,
        *,
        max_steps: int | None = None,
        mode: str | None = None,
        model: str | None = None,
    ) -> TurnOutcome:
        """Promote pending input and run the loop until the model stops (or a limit).

        ``mode`` / ``model`` override the session's own for this turn (the CLI's flags);
        otherwise the session's mode and model are read again at every step, so a
        ``set_config`` during the turn applies from the next step on.
        """
        return await self._run_turn(session_id, max_steps=max_steps, mode=mode, model=model)

    async def _run_turn(
        self,
        session_id: str,
        *,
        max_steps: int | None = None,
        mode: str | None = None,
        model: str | None = None,
        scope: SubagentScope | None = None,
    ) -> TurnOutcome:
        """``scope``: a subagent's turn, bound by its parent's limits (never looser)."""
        info = await self._require(session_id)
        if model is not None:
            self._catalog().resolve(model)
        recorder = Recorder(
            session_id=session_id, store=self._store, editor=self._editor, clock=self._clock
        )
        folder = _path_of(info.workspace_folder)
        live = _LiveConfig(
            self,
            session_id,
            folder,
            max_steps,
            mode_override=scope.mode if scope is not None else mode,
            model_override=model,
            scope=scope,
        )
        config, provider = live.apply(info)
        start_title = None
        if self._options.titles and not info.title:
            start_title = await self._title_starter(session_id, recorder, provider, config.model)

        async def subtask(description: str, prompt: str, agent: str) -> SubtaskResult:
            parent = live.config
            scope = subagent_scope(agent, parent.mode, parent.captured_rules())
            return await self._run_subtask(
                session_id, folder, description, prompt, agent, parent.model.ref, scope
            )

        runner = TurnRunner(
            session_id=session_id,
            config=config,
            store=self._store,
            provider=provider,
            tools=self._tools,
            recorder=recorder,
            clock=self._clock,
            ids=self._ids,
            gate=PermissionGate(
                session_id=session_id,
                mode=config.mode,
                store=self._store,
                editor=self._editor,
                recorder=recorder,
            ),
            editor=self._editor,
            sources=self._sources,
            snapshots=self._snapshots,
            subtasks=subtask,
            on_first_answer=start_title,
            refresh=live.refresh,
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
        provider, model = self._session_model(info.model)
        recorder = Recorder(
            session_id=session_id, store=self._store, editor=self._editor, clock=self._clock
        )
        compactor = Compactor(
            session_id=session_id,
            store=self._store,
            provider=provider,
            recorder=recorder,
            clock=self._clock,
            sources=self._sources,
            model=model,
            keep_recent_tokens=self._options.compaction_of(model).keep_recent_tokens,
            workspace_roots=self.workspace_roots(_path_of(info.workspace_folder)),
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

    # -- configuration options -------------------------------------------------------------

    async def config_options(self, session_id: str) -> list[dict[str, Any]]:
        """The session's ``configOptions`` (protocol.md §1): its mode and its model."""
        info = await self._require(session_id)
        return self._config_options(info.mode, info.model)

    async def set_config(self, session_id: str, config_id: str, value: str) -> list[dict[str, Any]]:
        """Set the session's mode (build, plan) or model (a ``provider/model`` the catalog
        resolves) and return the new ``configOptions``.

        Recorded as a ``config_changed`` event; a running turn takes it up at its next step,
        never during a tool call. Setting the current value again is accepted and records
        nothing. Anything else raises ``InvalidConfigValue``.
        """
        info = await self._require(session_id)
        if config_id not in CONFIG_IDS:
            raise InvalidConfigValue(f"configId must be 'mode' or 'model', not {config_id!r}")
        if not isinstance(value, str):
            raise InvalidConfigValue(f"the value of {config_id} must be a string")
        mode, model = info.mode, info.model
        if config_id == "mode":
            _check_mode(value)
            mode = value
        else:
            _check_model_ref(value)
            if value != info.model:
                self._catalog().resolve(value)
            model = value
        options = self._config_options(mode, model)
        if (mode, model) != (info.mode, info.model):
            await self._emit(
                session_id,
                "config_changed",
                {"configId": config_id, "value": value, "configOptions": options},
            )
            self._config_changes[session_id] = self._config_changes.get(session_id, 0) + 1
        return options

    def _config_options(self, mode: str, model: str) -> list[dict[str, Any]]:
        modes = [
            {"value": value, "name": name, "description": description}
            for value, (name, description) in MODES.items()
        ]
        if mode not in MODES:  # a subagent's session
            modes.append({"value": mode, "name": mode.capitalize()})
        choices = self._catalog().offered()
        if model not in {c.ref for c in choices}:
            choices.append(ModelChoice(ref=model, name=model))
        return [
            {
                "configId": "mode",
                "name": "Mode",
                "category": "mode",
                "type": "select",
                "currentValue": mode,
                "options": modes,
            },
            {
                "configId": "model",
                "name": "Model",
                "category": "model",
                "type": "select",
                "currentValue": model,
                "options": [c.to_json() for c in choices],
            },
        ]

    def _catalog(self) -> ModelCatalog:
        return self._models or SingleModel(self._provider, self._options.model)

    def _session_model(self, ref: str) -> tuple[Provider, ModelInfo]:
        """The provider and model of the session's ``ref``; the configured model when the
        catalog cannot resolve it (a session from another configuration)."""
        try:
            return self._catalog().resolve(ref)
        except InvalidConfigValue as error:
            if ref != self._options.model.ref:
                _log.warning(
                    "session model %s unavailable (%s); using %s",
                    ref,
                    error,
                    self._options.model.ref,
                )
            return self._provider, self._options.model

    # -- revert --------------------------------------------------------------------------

    async def revert_stage(
        self, session_id: str, message_id: str, *, force: bool = False
    ) -> RevertResult:
        """Files back to before ``message_id``; it and later messages are hidden.

        A document open in the editor is changed through the editor (the change lands in its
        buffer and undo history; the disk is the user's to save), any other file on disk.
        A file the user changed after the agent's last step (an open one: its buffer) is a
        conflict and is left alone unless ``force``; so is an open document the editor does
        not change, and one the revert would delete (unless ``force``: then it is deleted on
        disk)."""
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
        reasons: dict[str, str] = {}
        restore_tree = undo_tree = ""
        if steps and self._snapshots is not None:
            restore_tree = steps[0].before
            buffers = open_in(await self._editor.open_documents(), str(root))
            changed = await self._snapshots.changed_since(root, steps[-1].after, files, buffers)
            undo_tree = await self._snapshots.track(root, buffers)
            if not force:
                reasons = {p: "changed since the agent's step" for p in changed}
            chosen = [p for p in files if p not in reasons]
            reasons |= await self._restore(
                root, restore_tree, chosen, buffers, now=undo_tree, delete_open=force
            )
        conflicts = [p for p in files if p in reasons]
        await self._emit(
            session_id,
            "revert_staged",
            {
                "messageId": message_id,
                "restoreTree": restore_tree,
                "undoTree": undo_tree,
                "files": files,
                "conflicts": conflicts,
                "hidden": later,
            },
        )
        return RevertResult(files=tuple(files), conflicts=tuple(conflicts), reasons=reasons)

    async def revert_clear(self, session_id: str) -> RevertResult:
        """Undo the staged revert: files and messages back as they were.

        Open documents get their buffer's text back through the editor; a document the
        editor does not change is left alone (answered as a conflict)."""
        info = await self._require(session_id)
        staged = staged_revert(await self._store.events(session_id))
        if staged is None:
            return RevertResult(files=(), conflicts=())
        reasons: dict[str, str] = {}
        if staged.undo_tree and staged.files and self._snapshots is not None:
            root = Path(_path_of(info.workspace_folder))
            buffers = open_in(await self._editor.open_documents(), str(root))
            reasons = await self._restore(
                root, staged.undo_tree, staged.files, buffers, now=None, delete_open=True
            )
            for path, why in reasons.items():
                _log.warning("revert cleared; %s left as it is: %s", path, why)
        await self._emit(
            session_id,
            "revert_cleared",
            {"messageId": staged.message_id, "files": list(staged.files)},
        )
        conflicts = tuple(p for p in staged.files if p in reasons)
        return RevertResult(files=staged.files, conflicts=conflicts, reasons=reasons)

    async def _restore(
        self,
        root: Path,
        tree: str,
        paths: Sequence[str],
        buffers: Mapping[str, str],
        *,
        now: str | None,
        delete_open: bool,
    ) -> dict[str, str]:
        """Make ``paths`` match ``tree``: a document open in the editor (``buffers``) whose
        file exists through the editor, anything else on disk. Answers the paths left alone,
        with why. ``now`` is the tree of the workspace now, buffers included (taken here when
        None and needed); ``delete_open``: a document ``tree`` does not have is deleted on
        disk (else it is left alone)."""
        snapshots = self._snapshots
        assert snapshots is not None
        left: dict[str, str] = {}
        on_disk: list[str] = []
        for rel in paths:
            path = str(root / rel)
            buffer = buffers.get(path)
            if buffer is not None and now is None:
                now = await snapshots.track(root, buffers)
            if buffer is None or now is None or await snapshots.read(root, now, rel) is None:
                on_disk.append(rel)  # not open, or its file is gone (restored on disk)
                continue
            target = await snapshots.read(root, tree, rel)
            if target is None:
                if delete_open:
                    on_disk.append(rel)
                else:
                    left[rel] = (
                        "open in the editor; the revert would delete it (close it first, or force)"
                    )
                continue
            target = in_buffer_form(target, buffer)
            if target == buffer:
                continue
            result = await self._editor.apply_document_edit(path, buffer, target)
            if result.status == "not_open":  # closed meanwhile: the disk is its text now
                on_disk.append(rel)
            elif result.status == "conflict":
                left[rel] = f"the editor did not change it ({result.message or 'conflict'})"
        if on_disk:
            await snapshots.restore(root, tree, on_disk)
        return left

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
        self,
        parent: str,
        folder: str,
        description: str,
        prompt: str,
        agent: str,
        model: str,
        scope: SubagentScope,
    ) -> SubtaskResult:
        """A child session with its own log and the agent's restricted tools, run to its end.

        ``scope`` binds it: its parent's limits stay in force (so it is never looser than
        its parent), and under a plan-mode parent it is read-only and asks as in plan mode.
        """
        if agent not in SUBAGENTS:
            known = ", ".join(sorted(SUBAGENTS))
            error = f"Unknown agent type {agent!r}; available: {known}."
            return SubtaskResult(session_id="", text="", stop_reason="error", error=error)
        child = await self.create(
            workspace_folder=folder,
            title=f"{description} (@{agent} subagent)",
            mode="explore" if scope.mode == "plan" else agent,  # recorded as it really runs
            parent_session_id=parent,
            model=model,
        )
        await self.admit(child, [{"type": "text", "text": prompt}])
        outcome = await self._run_turn(child, scope=scope)
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

    def workspace_roots(self, folder: str) -> tuple[str, ...]:
        """The session's boundary: its own folder first, then the other workspace folders."""
        if self._roots is None:
            return (folder,)
        others = [root for root in self._roots(folder) if root != folder]
        return (folder, *others)

    def _turn_config(
        self,
        folder: str,
        max_steps: int | None,
        mode: str,
        model: ModelInfo,
        scope: SubagentScope | None = None,
    ) -> TurnConfig:
        options = self._options
        prompt = PROMPT_OF_MODE.get(mode, "build")
        rules = options.rules
        if scope is not None:  # a subagent: its own prompt, its parent's limits
            prompt = "explore" if scope.mode == "plan" else PROMPT_OF_MODE.get(scope.agent, prompt)
            rules = (*rules, *scope.limits)
        return TurnConfig(
            model=model,
            system_prompt=prompts.load(prompt),
            workspace_roots=self.workspace_roots(folder),
            max_steps=max_steps if max_steps is not None else options.max_steps,
            retry=options.retry,
            thinking=options.thinking,
            mode=mode,
            rules=rules,
            secrets=options.secrets,
            compaction=options.compaction_of(model),
        )

    async def _title_starter(
        self, session_id: str, recorder: Recorder, provider: Provider, model: ModelInfo
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
            title = await generate_title(provider, model.model, text)
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


class _LiveConfig:
    """A turn's view of its session's mode and model, re-read at every step.

    An explicit override (the CLI's ``--mode``/``--model``) wins for the whole turn. The
    config and provider are rebuilt only when the mode or the model changed.
    """

    def __init__(
        self,
        service: SessionService,
        session_id: str,
        folder: str,
        max_steps: int | None,
        *,
        mode_override: str | None,
        model_override: str | None,
        scope: SubagentScope | None = None,
    ) -> None:
        self._service = service
        self._scope = scope
        self._session_id = session_id
        self._folder = folder
        self._max_steps = max_steps
        self._mode_override = mode_override
        self._model_override = model_override
        self._key: tuple[str, str, tuple[str, ...]] | None = None
        self._info: SessionInfo | None = None
        self._seen_changes = -1
        self._config: TurnConfig | None = None
        self._provider: Provider | None = None

    @property
    def config(self) -> TurnConfig:
        assert self._config is not None, "apply() first"
        return self._config

    def apply(self, info: SessionInfo) -> tuple[TurnConfig, Provider]:
        mode = self._mode_override or info.mode
        ref = self._model_override or info.model
        roots = self._service.workspace_roots(self._folder)
        if self._key != (mode, ref, roots) or self._config is None or self._provider is None:
            service = self._service
            self._provider, model = service._session_model(ref)
            self._config = service._turn_config(
                self._folder, self._max_steps, mode, model, self._scope
            )
            self._key = (mode, ref, roots)
        return self._config, self._provider

    async def refresh(self) -> tuple[TurnConfig, Provider]:
        changes = self._service._config_changes.get(self._session_id, 0)
        if self._info is None or changes != self._seen_changes:
            info = await self._service._store.session(self._session_id)
            if info is None:  # deleted under the turn: keep going as configured
                return self.config, self._provider_now()
            self._info, self._seen_changes = info, changes
        return self.apply(self._info)

    def _provider_now(self) -> Provider:
        assert self._provider is not None, "apply() first"
        return self._provider


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise InvalidConfigValue(f"unknown mode {mode!r}: expected {' or '.join(MODES)}")


def _check_model_ref(ref: str) -> None:
    provider, sep, model = ref.partition("/")
    if not sep or not provider or not model:
        raise InvalidConfigValue(
            f"invalid model {ref!r}: expected 'provider/model', e.g. 'anthropic/claude-sonnet-4-5'"
        )


def _file_uri(path: str) -> str:
    return PurePosixPath(path).as_uri()


def _path_of(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri
