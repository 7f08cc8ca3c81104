"""One turn: ask the model, run the tools it calls, feed the results back, repeat.

Everything that happens is an event (through the :class:`Recorder`), so a crash or a
cancellation leaves a log from which the turn can be understood and continued. The turn's
jobs live beside it: the request's view of the session (``model_view``), the response stream
(``response_stream``), the tool calls (``tool_calls``), the undo points (``snapshot_steps``)
and what is open in the log (``turn_records``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core import prompts
from lsp_agent.core.checkpoints import SnapshotStore, user_message_ids
from lsp_agent.core.compaction.policy import CompactionPolicy, needs_compaction
from lsp_agent.core.context import ContextSources
from lsp_agent.core.errors import (
    ContextOverflow,
    ContextUnavailable,
    LspAgentError,
    ProviderError,
)
from lsp_agent.core.history import without_images
from lsp_agent.core.interfaces import (
    Clock,
    Editor,
    EventStore,
    IdFactory,
    Provider,
    ToolExecutor,
)
from lsp_agent.core.messages import Message, ModelRequest, TextPart, ThinkingConfig
from lsp_agent.core.models import ModelInfo, SideModel
from lsp_agent.core.modes import mode_rules
from lsp_agent.core.permission.rules import Rule
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.retry import RetryPolicy
from lsp_agent.core.secrets.filter import NO_SECRETS, SecretFilter
from lsp_agent.core.transcript import SessionInfo, TranscriptMessage
from lsp_agent.core.turn.call_events import SubtaskRunner
from lsp_agent.core.turn.model_view import ModelView
from lsp_agent.core.turn.permission_gate import PermissionGate
from lsp_agent.core.turn.records import TurnRecords
from lsp_agent.core.turn.response_stream import IdleBoundedProvider, Response, ResponseStream
from lsp_agent.core.turn.snapshot_steps import SnapshotSteps
from lsp_agent.core.turn.tool_calls import ToolCalls

StopReason = Literal["end_turn", "max_steps", "cancelled", "error", "refusal"]


Notices = Callable[[], Sequence[str]]
"""The problems the user should read now (one line each), outside any tool call."""


def no_notices() -> Sequence[str]:
    return ()


@attrs.frozen(kw_only=True)
class TurnConfig:
    model: ModelInfo
    system_prompt: str
    """The mode's prompt; the epoch's baseline follows it."""
    workspace_roots: tuple[str, ...]
    max_steps: int = 50
    retry: RetryPolicy = RetryPolicy()
    thinking: ThinkingConfig | None = None
    mode: str = "build"
    compaction: CompactionPolicy = CompactionPolicy()
    secrets: SecretFilter = NO_SECRETS
    rules: tuple[Rule, ...] = ()
    """The configured permission rules (defaults and every config layer, in order)."""
    read_only_mcp: tuple[str, ...] = ()
    """MCP tools (``<server>:<tool>`` patterns) the user's config marks read-only: the only
    ones a mode's ``mcp`` limit (plan's) lets the configured rules decide."""
    max_output_tokens: int | None = None
    """Each answer's limit (the agent's ``max_tokens``); None = the model's own."""
    summary: SideModel | None = None
    """Where a compaction's summary request goes; None = this turn's model."""

    def captured_rules(self) -> tuple[Rule, ...]:
        """The rule set a tool call is decided by: configuration, then the mode's rules."""
        return (*self.rules, *mode_rules(self.mode, self.read_only_mcp))


@attrs.frozen(kw_only=True)
class TurnOutcome:
    stop_reason: StopReason
    steps: int
    error: LspAgentError | None = None


SessionConfig = Callable[[], Awaitable[tuple[TurnConfig, Provider]]]
"""Reads the session's current mode and model: the turn's config and provider from now on."""


class TurnRunner:
    """Runs the turn of one session. One instance per turn; not reused."""

    def __init__(
        self,
        *,
        session_id: str,
        config: TurnConfig,
        store: EventStore,
        provider: Provider,
        tools: ToolExecutor,
        recorder: Recorder,
        clock: Clock,
        ids: IdFactory,
        gate: PermissionGate,
        editor: Editor,
        sources: ContextSources,
        snapshots: SnapshotStore | None = None,
        subtasks: SubtaskRunner | None = None,
        on_first_answer: Callable[[], None] | None = None,
        refresh: SessionConfig | None = None,
        notices: Notices = no_notices,
        session: SessionInfo | None = None,
    ) -> None:
        """``session``: the row the caller has just read (else it is read at the start).

        ``on_first_answer`` runs once the model has answered (side work such as a title
        waits for it, so a bad key or an outage costs one request, not two).

        ``refresh`` is called at the start of every step: a mode or model the session was
        switched to meanwhile applies from that step on (never to a call in flight, whose
        rules were captured when it started). Without it the turn keeps ``config``.

        ``notices``: problems outside the turn the user should read once per session (a tool
        server that could not start); a turn's first state update carries the new ones.
        """
        self._session_id = session_id
        self._session = session
        self._notices = notices
        self._config = config
        self._provider = provider
        self._refresh = refresh
        self._on_first_answer = on_first_answer
        self._store = store
        self._rec = recorder
        self._gate = gate
        self._records = TurnRecords(
            recorder=recorder,
            tools={spec.name: spec for spec in tools.specs()},
            roots=config.workspace_roots,
        )
        self._view = ModelView(
            session_id=session_id,
            store=store,
            sources=sources,
            recorder=recorder,
            clock=clock,
            ids=ids,
        )
        self._stream = ResponseStream(
            recorder=recorder, records=self._records, ids=ids, clock=clock
        )
        self._calls = ToolCalls(
            session_id=session_id,
            tools=tools,
            gate=gate,
            editor=editor,
            recorder=recorder,
            records=self._records,
            subtasks=subtasks,
        )
        self._snapshots = SnapshotSteps(
            snapshots=snapshots, editor=editor, recorder=recorder, ids=ids, store=store
        )

    async def run(self) -> TurnOutcome:
        info = self._session or await self._store.session(self._session_id)
        if info is not None:
            self._records.usage = info.usage
        step = 0
        try:
            await self._start()
            while True:
                step += 1
                await self._reconfigure()
                stop = await self._step(step, last=step >= self._config.max_steps)
                if stop is not None:
                    await self._snapshots.settle()
                    await self._rec.emit(ev.StateChanged(state="idle", stop_reason=stop))
                    return TurnOutcome(stop_reason=stop, steps=step)
        except (ProviderError, ContextUnavailable) as error:
            retryable = isinstance(error, ProviderError) and error.retryable
            await self._snapshots.settle()
            await self._rec.emit(
                ev.StateChanged(
                    state="idle",
                    stop_reason="error",
                    error={"message": str(error), "retryable": retryable},
                )
            )
            return TurnOutcome(stop_reason="error", steps=step, error=error)
        except LspAgentError as error:
            # The store failed (e.g. a full disk): the turn stops with that error. Saying so
            # in the log may fail the same way; recovery then closes the turn on the next open.
            with contextlib.suppress(LspAgentError):
                await self._records.failed(error)
            return TurnOutcome(stop_reason="error", steps=step, error=error)
        except asyncio.CancelledError:
            with contextlib.suppress(LspAgentError):  # the step's undo point is kept
                await asyncio.shield(self._snapshots.settle())
            await asyncio.shield(self._records.cancelled(self._gate.cancelled_while_asking))
            raise
        finally:
            self._snapshots.stop()

    async def _start(self) -> None:
        """Running: the view of the session (a context source that cannot be read stops the
        turn here, before the input is promoted: it stays queued), the pending input, then
        the first snapshot, taken while the first request is in flight."""
        events = await self._store.events(self._session_id)
        told = {
            note
            for e in events
            if isinstance(state := e.event, ev.StateChanged)
            for note in state.notes or ()
        }
        notes = [note for note in self._notices() if note not in told]
        await self._rec.emit(
            ev.StateChanged(state="running", owner=self._store.owner(), notes=notes or None)
        )
        await self._view.open(events, self._config.workspace_roots)
        visible = [m for m in user_message_ids(events) if m not in self._view.hidden]
        self._snapshots.turn_message = visible[-1] if visible else None
        await self._promote_pending()
        self._snapshots.start(self._config.workspace_roots)

    async def _promote_pending(self) -> None:
        pending = []
        for message_id in await self._store.pending_inputs(self._session_id):
            pending.append((message_id, await self._store.inbox_content(message_id)))
        for message_id, content in pending:
            await self._rec.emit(ev.UserMessagePromoted(message_id=message_id, content=content))
            self._snapshots.turn_message = message_id

    async def _reconfigure(self) -> None:
        """Between steps (a safe point): take up the session's current mode and model."""
        if self._refresh is None:
            return
        self._config, self._provider = await self._refresh()
        self._gate.mode = self._config.mode

    async def _step(self, step: int, *, last: bool) -> StopReason | None:
        """One response and its tool calls; why the turn stops now, or None to go on."""
        response = await self._respond(step, last)
        if self._on_first_answer is not None:
            self._on_first_answer()
            self._on_first_answer = None
        await self._records.add_usage(response.usage, self._config.model)
        await self._records.message_ended(
            response.message_id, status="completed", finish_reason=response.finish
        )
        if response.calls:
            await self._snapshots.before_tools()
        stopped_by_user = await self._calls.run_step(
            response.message_id, response.calls, self._config, last=last
        )
        if self._calls.may_change_files(response.calls):
            await self._snapshots.after_step(response.message_id, self._config.workspace_roots)
        if response.finish == "refusal":
            return "refusal"
        if last:
            return "max_steps"
        if stopped_by_user:
            return "cancelled"
        return None if response.calls else "end_turn"

    async def _respond(self, step: int, last: bool) -> Response:
        """The model's response to the session so far. A context overflow before anything
        of the step started gets one compaction and one retry."""
        try:
            return await self._stream_response(await self._request(last), step)
        except ContextOverflow as overflow:
            if not await self._compact(reason="overflow"):
                raise
            request = await self._request(last, allow_compaction=False)
            try:
                return await self._stream_response(request, step)
            except ContextOverflow as again:
                raise ProviderError(
                    "the conversation is still too long for the model after compacting it "
                    f"({again}); start a new session or compact with a smaller "
                    "compaction.keep_recent_tokens",
                    kind="context_overflow",
                    provider=again.provider,
                ) from overflow

    async def _stream_response(self, request: ModelRequest, step: int) -> Response:
        return await self._stream.respond(
            request,
            provider=self._provider,
            retry=self._config.retry,
            model=self._config.model.ref,
            step=step,
        )

    async def _request(self, last: bool, *, allow_compaction: bool = True) -> ModelRequest:
        await self._view.note_changes(self._config.workspace_roots)
        await self._rec.flush()  # the step's queued records are part of what is read back
        transcript = await self._view.transcript()
        if (
            allow_compaction
            and await self._needs_compaction(transcript)
            and await self._compact(reason="threshold")
        ):
            transcript = await self._view.transcript()
        return self._build(transcript, last=last)

    def _build(self, transcript: list[TranscriptMessage], *, last: bool) -> ModelRequest:
        messages = self._view.messages(transcript)
        if self._config.model.image_input is False:
            messages = without_images(messages)
        if last:
            messages = _with_wrap_up(messages, prompts.load("max_steps"))
        return ModelRequest(
            model=self._config.model.model,
            system=self._view.system(self._config.system_prompt),
            messages=tuple(messages),
            tools=self._calls.offered(self._config.captured_rules()),
            tool_choice="none" if last else "auto",
            max_output_tokens=self._config.max_output_tokens or self._config.model.max_output,
            thinking=self._config.thinking,
        )

    async def _needs_compaction(self, transcript: list[TranscriptMessage]) -> bool:
        return await needs_compaction(
            self._view.verbatim(transcript),
            context_used=self._records.usage.context_used,
            policy=self._config.compaction,
            model=self._config.model,
            count_tokens=lambda: self._provider.count_tokens(self._build(transcript, last=False)),
        )

    async def _compact(self, *, reason: str) -> bool:
        summary = self._config.summary
        provider = summary.provider if summary is not None else self._provider
        return await self._view.compact(
            IdleBoundedProvider(provider, self._config.retry.stream_idle_timeout),
            model=summary.info if summary is not None else self._config.model,
            max_tokens=summary.max_output_tokens if summary is not None else None,
            thinking=summary.thinking if summary is not None else None,
            keep_recent_tokens=self._config.compaction.keep_recent_tokens,
            roots=self._config.workspace_roots,
            reason=reason,
        )


def _with_wrap_up(messages: list[Message], instruction: str) -> list[Message]:
    """The wrap-up instruction as one more user message (earlier messages stay as sent)."""
    return [*messages, Message(role="user", parts=(TextPart(text=instruction),))]
