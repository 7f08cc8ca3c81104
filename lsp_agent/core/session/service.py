"""SessionService: the core's front door for every adapter (CLI, language server, tests).

Input is admitted (made durable) before anything else happens; a turn then promotes it
into the conversation and runs the loop. The service wires the parts that do the rest:
``turn_setup`` (a turn's config from the session's mode and model), ``config_options``
(changing them), ``revert``, ``subtasks`` and ``title``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lsp_agent.core import events as ev
from lsp_agent.core.attachments import AttachScope, PromptAttachments, PromptFocus
from lsp_agent.core.checkpoints import RevertScope, SnapshotChange, SnapshotStore, staged_revert
from lsp_agent.core.compaction.policy import latest_compaction_point
from lsp_agent.core.compaction.summary import Compactor
from lsp_agent.core.context import ContextSources, SourcesSnapshot, current_epoch
from lsp_agent.core.errors import InvalidParams, SessionNotFound
from lsp_agent.core.event_writer import EventWriter
from lsp_agent.core.images import image_problem, images_of, refusal
from lsp_agent.core.interfaces import Clock, Editor, EventStore, IdFactory, Provider, ToolExecutor
from lsp_agent.core.models import ModelCatalog, ModelInfo, SideModel, SingleModel
from lsp_agent.core.modes import SUBAGENTS, SubagentScope, check_client_mode, subagent_scope
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.review.comments import comments_prompt
from lsp_agent.core.review.ledger import fold
from lsp_agent.core.review.reviews import FileTexts, FileView, ResolveResult, ReviewAction, Reviews
from lsp_agent.core.session.changes import prompt_changes
from lsp_agent.core.session.config_options import ConfigChanges, ConfigChoices, check_model_ref
from lsp_agent.core.session.revert import RevertResult, Reverts
from lsp_agent.core.session.subtasks import run_subtask, subtask_model
from lsp_agent.core.session.title import Titles
from lsp_agent.core.session.turn_setup import LiveConfig, TurnSetup
from lsp_agent.core.tooling import SubtaskResult
from lsp_agent.core.transcript import SessionInfo
from lsp_agent.core.turn.loop import Notices, TurnOutcome, TurnRunner, no_notices
from lsp_agent.core.turn.permission_gate import PermissionGate
from lsp_agent.core.uris import file_uri, local_path


class FoldersOnly:
    """Context sources for hosts that give none: the workspace folders and the platform."""

    async def collect(self, workspace_roots: Sequence[str], *, full: bool) -> SourcesSnapshot:
        return SourcesSnapshot(workspace_roots=tuple(workspace_roots), platform=sys.platform)


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
        notices: Notices = no_notices,
        files: FileTexts | None = None,
        attachments: PromptAttachments | None = None,
    ) -> None:
        """``sources`` feed the baseline note (instructions, skills, git); none: folders only.

        ``roots`` gives the folders a session working in ``folder`` may touch (an editor's
        workspace folders, multi-root; asked again at every step, so added or removed folders
        apply from the next step); without it, just the session's own folder.

        ``notices``: problems each session is told about once, at a turn's start (e.g. an
        MCP server that could not start).

        ``files``: the disk as text, for undoing a reviewed hunk of a file no editor has
        open (``core/review``); without it such a hunk cannot be undone.

        ``attachments`` reads what a prompt's links and mentions name, once, at admission
        (``core/attachments.py``); without it they stay bare links.

        ``models`` are the models sessions may switch to; without it the only one is
        ``options.model`` on ``provider`` (the default of every new session either way).
        """
        self._store = store
        self._tools = tools
        self._editor = editor
        self._clock = clock
        self._ids = ids
        self._options = options
        self._notices = notices
        self._attachments = attachments
        self._sources = sources or FoldersOnly()
        self._snapshots = snapshots
        self._catalog = models or SingleModel(provider, options.model)
        self._events = EventWriter(store=store, editor=editor, clock=clock)
        self._setup = TurnSetup(
            options=options, catalog=self._catalog, provider=provider, roots=roots
        )
        self._config = ConfigChanges(
            catalog=self._catalog, events=self._events, default_model=options.model_for
        )
        self._reverts = Reverts(
            store=store, editor=editor, events=self._events, snapshots=snapshots
        )
        self._titles = Titles(store=store)
        self._reviews = Reviews(
            store=store, editor=editor, events=self._events, snapshots=snapshots, files=files
        )

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
        default to the configured ones (the model: ``agents.<mode>.model``, else ``model``);
        anything else raises ``InvalidConfigValue`` (a subagent's mode only for a child
        session, ``parent_session_id``). The one check of a client's mode.
        """
        if mode is not None and not (parent_session_id is not None and mode in SUBAGENTS):
            check_client_mode(mode)
        if model is not None:
            check_model_ref(model)
            self._catalog.resolve(model)
        session_id = self._ids.new("ses")
        created = ev.SessionCreated(
            session_id=session_id,
            workspace_folder=file_uri(workspace_folder),
            title=title,
            model=model or self._options.model_for(mode or self._options.mode),
            mode=mode or self._options.mode,
            parent_session_id=parent_session_id,
        )
        await self._events.emit(session_id, created)
        return session_id

    async def admit(
        self,
        session_id: str,
        content: list[dict[str, Any]],
        *,
        client_message_id: str | None = None,
        focus: PromptFocus | None = None,
        info: SessionInfo | None = None,
    ) -> str:
        """Make the input durable and return its message id.

        A staged revert is committed first: a new prompt makes it final. What the
        content's links and mentions name is attached now, with the input (``focus``: the
        editor context it came with). ``client_message_id`` is recorded; the runtime
        de-duplicates by it before admitting (``runtime/prompts.py``). ``info``: the
        session's row, when the caller has just read it.

        The user's review comments not sent yet open the message (``core/review/comments``)
        and are marked sent with it."""
        info = info or await self._require(session_id)
        self._check_images(info, images_of(content))
        events = await self._store.events(session_id)
        if staged_revert(events) is not None:
            await self._reverts.commit(session_id)
            events = await self._store.events(session_id)
        ledger = fold(events)
        comments = ledger.unsent_comments()
        opening = comments_prompt(ledger, comments)
        if opening:
            content = [{"type": "text", "text": opening}, *content]
        message_id = self._ids.new("msg")
        attached = None
        if self._attachments is not None:
            folder = local_path(info.workspace_folder)
            scope = AttachScope(
                folder=folder, roots=self._setup.workspace_roots(folder), focus=focus
            )
            attached = await self._attachments.expand(content, scope) or None
            self._check_images(info, images_of((), attached or ()))
        admitted = ev.UserMessageAdmitted(
            message_id=message_id,
            content=content,
            client_message_id=client_message_id,
            attachments=attached,
        )
        await self._events.emit(session_id, admitted)
        if opening:
            sent = ev.ReviewCommentsSent(
                comment_ids=[c.comment_id for c in comments],
                message_id=message_id,
                files=ledger.summary(local_path(info.workspace_folder)),
            )
            await self._events.emit(session_id, sent)
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

    async def run_subagent_turn(self, session_id: str, scope: SubagentScope) -> TurnOutcome:
        """A subagent's turn (``subtasks``), bound by its parent's limits (never looser)."""
        return await self._run_turn(session_id, scope=scope)

    async def _run_turn(
        self,
        session_id: str,
        *,
        max_steps: int | None = None,
        mode: str | None = None,
        model: str | None = None,
        scope: SubagentScope | None = None,
    ) -> TurnOutcome:
        seen_changes = self._config.count(session_id)  # before the read: a change during it
        info = await self._require(session_id)  # the turn's one read of the row
        if model is not None:
            self._catalog.resolve(model)
        recorder = Recorder(
            session_id=session_id, store=self._store, editor=self._editor, clock=self._clock
        )
        folder = local_path(info.workspace_folder)
        live = LiveConfig(
            setup=self._setup,
            store=self._store,
            changes=self._config,
            session_id=session_id,
            folder=folder,
            max_steps=max_steps,
            mode_override=scope.mode if scope is not None else mode,
            model_override=model,
            scope=scope,
        )
        config, provider = live.start(info, seen_changes)
        start_title = None
        if self._options.titles and not info.title:
            titler = self._setup.side_model("title", provider, config.model)
            start_title = await self._titles.starter(session_id, recorder, titler)

        async def subtask(description: str, prompt: str, agent: str) -> SubtaskResult:
            parent = live.config
            scope = subagent_scope(agent, parent.mode, parent.captured_rules())
            return await run_subtask(
                self,
                self._store,
                session_id,
                folder,
                description,
                prompt,
                agent,
                subtask_model(self._catalog, self._options.agent("task").model, parent.model.ref),
                scope,
            )

        runner = TurnRunner(
            notices=self._notices,
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
            session=info,
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
        provider, model = self._setup.session_model(info.model)
        summarizer = self._setup.side_model("summary", provider, model)
        recorder = Recorder(
            session_id=session_id, store=self._store, editor=self._editor, clock=self._clock
        )
        compactor = Compactor(
            session_id=session_id,
            store=self._store,
            provider=summarizer.provider,
            recorder=recorder,
            clock=self._clock,
            sources=self._sources,
            model=summarizer.info,
            max_tokens=summarizer.max_output_tokens,
            thinking=summarizer.thinking,
            keep_recent_tokens=self._options.compaction_of(model).keep_recent_tokens,
            workspace_roots=self._setup.workspace_roots(local_path(info.workspace_folder)),
        )
        try:
            done = await compactor.run(
                latest_compaction_point(events),
                epoch.number if epoch is not None else 0,
                auto=False,
                reason="manual",
            )
        finally:
            await recorder.close()
        return done is not None

    # -- configuration options (config_options.py) ---------------------------------------

    def mode_model(self, mode: str) -> tuple[Provider, ModelInfo]:
        """The provider and model a new session in ``mode`` would start with: what a side
        request outside any session (the agent's review of changes, ``plan``'s) runs on."""
        return self._setup.session_model(self._options.model_for(mode))

    def new_session_options(self) -> ConfigChoices:
        """The mode and model a new session starts with, and the choices: what a client's
        pickers show before it has a session (protocol.md ``agent/config/options``)."""
        mode = self._options.mode
        return self._config.choices(mode, self._options.model_for(mode))

    async def config_options(self, session_id: str) -> ConfigChoices:
        """The session's mode and model, and the choices (protocol.md §1 ``configOptions``)."""
        info = await self._require(session_id)
        return self._config.choices(info.mode, info.model, info.thought_level)

    async def set_config(self, session_id: str, config_id: str, value: str) -> ConfigChoices:
        """Set the session's mode or model; answers the new choices.

        Recorded as a ``config_changed`` event; a running turn takes it up at its next step,
        never during a tool call. ``InvalidConfigValue`` for what cannot be set."""
        return await self._config.set(await self._require(session_id), config_id, value)

    # -- revert (revert.py) ----------------------------------------------------------------

    async def revert_stage(
        self,
        session_id: str,
        message_id: str,
        *,
        force: bool = False,
        scope: RevertScope = "both",
    ) -> RevertResult:
        """Files back to before ``message_id``; it and later messages are hidden (``scope``:
        ``code`` only the files, ``conversation`` only the messages)."""
        return await self._reverts.stage(session_id, message_id, force=force, scope=scope)

    async def revert_clear(self, session_id: str) -> RevertResult:
        """Undo the staged revert: files and messages back as they were."""
        return await self._reverts.clear(session_id)

    async def revert_commit(self, session_id: str) -> tuple[str, ...]:
        """Make the staged revert final: the hidden messages are dropped from the session."""
        return await self._reverts.commit(session_id)

    async def changes(self, session_id: str, message_id: str) -> list[SnapshotChange]:
        """What the turns answering the prompt ``message_id`` changed in the files, as one
        diff (``changes.py``); empty without snapshots."""
        return await prompt_changes(self._store, self._snapshots, session_id, message_id)

    async def undo(self, session_id: str) -> tuple[str, list[dict[str, Any]]]:
        """Stage a revert of the last user message; its prompt goes back to the input box."""
        return await self._reverts.undo(session_id)

    # -- review (core/review) ----------------------------------------------------------------

    async def review_list(self, session_id: str) -> list[FileView]:
        """The agent's changes hunk by hunk, each located in its file's current text."""
        return await self._reviews.files(session_id)

    async def review_resolve(
        self,
        session_id: str,
        action: ReviewAction,
        *,
        hunk_ids: Sequence[str] | None = None,
        paths: Sequence[str] | None = None,
        reason: str | None = None,
    ) -> ResolveResult:
        """Keep or undo pending hunks (by id and/or absolute path; neither: all pending).
        Call it while no turn runs: the model hears of undone hunks at its next turn.
        ``reason``: why, recorded as a comment on the hunks resolved (sent with the next
        prompt)."""
        result = await self._reviews.resolve(session_id, action, hunk_ids, paths)
        if reason and result.resolved:
            await self._reviews.comment(
                session_id,
                self._ids.new("cmt"),
                result.resolved,
                reason,
                action=action,
                lines=result.lines,
            )
        return result

    async def review_comment(self, session_id: str, hunk_ids: Sequence[str], text: str) -> str:
        """The user's comment on listed hunks; it goes to the model with the next prompt
        (or ``agent/review/sendComments``). Returns its id."""
        comment_id = self._ids.new("cmt")
        await self._reviews.comment(session_id, comment_id, hunk_ids, text)
        return comment_id

    async def review_unsent_comments(self, session_id: str) -> int:
        """How many comments the next prompt will carry."""
        return await self._reviews.unsent_comments(session_id)

    def side_model(self, agent: str) -> SideModel:
        """The model a side request of ``agent`` (e.g. ``commit``) outside any session goes
        to: as for a session on the configured model (``TurnSetup.side_model``)."""
        provider, model = self._setup.session_model(self._options.model.ref)
        return self._setup.side_model(agent, provider, model)

    def _check_images(self, info: SessionInfo, images: Sequence[Mapping[str, Any]]) -> None:
        """``InvalidParams`` for an image no model could be sent, or when the session's model
        takes none (its catalogue entry says so): refused before anything is recorded."""
        for image in images:
            problem = image_problem(image)
            if problem is not None:
                raise InvalidParams(f"prompt: {problem}")
        if images and self._catalog.resolve(info.model)[1].image_input is False:
            raise InvalidParams(refusal(info.model))

    async def record(self, session_id: str, event: ev.UntilChecked) -> None:
        """Record what a door's work around the turns found (``run --until``'s checks)."""
        await self._events.emit(session_id, event)

    async def drain(self, timeout: float) -> None:
        """Give side work (titles) up to ``timeout`` seconds to finish, then stop it."""
        await self._titles.drain(timeout)

    async def _require(self, session_id: str) -> SessionInfo:
        info = await self._store.session(session_id)
        if info is None:
            raise SessionNotFound(session_id)
        return info
