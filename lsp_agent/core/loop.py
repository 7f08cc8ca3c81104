"""One turn: ask the model, run the tools it calls, feed the results back, repeat.

Everything that happens is an event (through the :class:`Recorder`), so a crash or a
cancellation leaves a log from which the turn can be understood and continued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import attrs

from lsp_agent.core import prompts
from lsp_agent.core.call_events import CallEvents, SubtaskRunner
from lsp_agent.core.checkpoints import (
    MAX_PATCH_CHARS,
    MUTATING_TOOLS,
    SnapshotStore,
    files_json,
    hidden_messages,
    open_in,
    user_message_ids,
)
from lsp_agent.core.clock import iso_time
from lsp_agent.core.compaction import (
    Checkpoint,
    CompactionPolicy,
    current_view,
    estimate_tokens,
    latest_checkpoint,
    model_messages,
)
from lsp_agent.core.compactor import Compactor
from lsp_agent.core.context import (
    ContextSources,
    Epoch,
    build_baseline,
    changes,
    current_epoch,
    local_date,
)
from lsp_agent.core.errors import (
    ContextOverflow,
    ContextUnavailable,
    LspAgentError,
    ProviderError,
)
from lsp_agent.core.gate import PermissionGate
from lsp_agent.core.history import fold
from lsp_agent.core.interfaces import (
    Clock,
    Editor,
    EventStore,
    IdFactory,
    Provider,
    ToolExecutor,
)
from lsp_agent.core.messages import (
    Message,
    ModelRequest,
    SystemBlock,
    TextPart,
    ThinkingConfig,
    ToolCallPart,
    ToolSpec,
    Usage,
)
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.owner import current_owner
from lsp_agent.core.permission import (
    PermissionRequest,
    PermissionVerdict,
    Rule,
    hidden,
    mode_rules,
    permission_key,
)
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.retry import RetryPolicy
from lsp_agent.core.secrets import NO_SECRETS, SecretFilter
from lsp_agent.core.stream import (
    Finished,
    FinishReason,
    ReasoningDelta,
    ReasoningEnded,
    StreamEvent,
    TextDelta,
    ToolCallEnded,
    ToolCallStarted,
    UsageReported,
)
from lsp_agent.core.tooling import ToolCallContext
from lsp_agent.core.transcript import SessionUsage, TranscriptMessage

_log = logging.getLogger(__name__)

COUNT_FROM = 0.85
"""Share of the compaction limit from which the provider's token counter is asked."""

BREAKER_LIMIT = 3
"""Identical consecutive failures of one tool before it is withheld for the turn."""

StopReason = Literal["end_turn", "max_steps", "cancelled", "error", "refusal"]

TOOL_KINDS = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "apply_patch": "edit",
    "list": "search",
    "glob": "search",
    "grep": "search",
    "bash": "execute",
    "webfetch": "fetch",
}


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

    def captured_rules(self) -> tuple[Rule, ...]:
        """The rule set a tool call is decided by: configuration, then the mode's rules."""
        return (*self.rules, *mode_rules(self.mode))


@attrs.frozen(kw_only=True)
class TurnOutcome:
    stop_reason: StopReason
    steps: int
    error: LspAgentError | None = None


SessionConfig = Callable[[], Awaitable[tuple[TurnConfig, Provider]]]
"""Reads the session's current mode and model: the turn's config and provider from now on."""


class _BrokeOff(Exception):
    """A response stream broke off after it had started (retried once, same request)."""


@attrs.define
class _StepState:
    """What one streamed response produced (assistant message ``message_id``)."""

    message_id: str
    call_ids: dict[str, str] = attrs.Factory(dict)  # provider's id → ours (unique everywhere)
    part_id: str | None = None
    part_type: Literal["text_delta", "reasoning_delta"] | None = None
    calls: list[ToolCallEnded] = attrs.Factory(list)
    usage: Usage = Usage()
    finish: FinishReason = "end_turn"
    stopped_by_user: bool = False
    """A call was rejected without a reason: the rest of the step does not run."""


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
    ) -> None:
        """``on_first_answer`` runs once the model has answered (side work such as a title
        waits for it, so a bad key or an outage costs one request, not two).

        ``refresh`` is called at the start of every step: a mode or model the session was
        switched to meanwhile applies from that step on (never to a call in flight, whose
        rules were captured when it started). Without it the turn keeps ``config``.
        """
        self._on_first_answer = on_first_answer
        self._refresh = refresh
        self._gate = gate
        self._sources = sources
        self._snapshots = snapshots
        self._tree: str | None = None
        self._tree_task: asyncio.Task[str | None] | None = None
        self._hidden: frozenset[str] = frozenset()
        self._turn_message: str | None = None
        self._epoch = Epoch(number=0, baseline="", date="", instructions={}, skills="")
        self._checkpoint: Checkpoint | None = None
        self._fresh_epoch = False
        self._editor = editor
        self._subtasks = subtasks
        self._session_id = session_id
        self._config = config
        self._store = store
        self._provider = provider
        self._tools = tools
        self._rec = recorder
        self._clock = clock
        self._ids = ids
        self._open_message: str | None = None
        self._open_tools: dict[str, dict[str, Any]] = {}
        self._usage = SessionUsage()
        self._failures: dict[str, tuple[str, int]] = {}  # tool → (last error, times in a row)
        self._withheld: dict[str, str] = {}  # tool → the error that got it withheld

    async def run(self) -> TurnOutcome:
        info = await self._store.session(self._session_id)
        if info is not None:
            self._usage = info.usage
        step = 0
        try:
            await self._rec.emit("state_changed", {"state": "running", "owner": current_owner()})
            self._epoch = await self._context_epoch()
            await self._promote_pending()
            # Taken while the first request is in flight; awaited before any tool runs.
            self._tree_task = asyncio.create_task(self._track())
            while True:
                step += 1
                await self._reconfigure()
                last = step >= self._config.max_steps
                state = await self._step(step, last)
                if state.finish == "refusal":
                    return await self._end("refusal", step)
                if last:
                    return await self._end("max_steps", step)
                if state.stopped_by_user:
                    return await self._end("cancelled", step)
                if not state.calls:
                    return await self._end("end_turn", step)
        except (ProviderError, ContextUnavailable) as error:
            retryable = isinstance(error, ProviderError) and error.retryable
            await self._rec.emit(
                "state_changed",
                {
                    "state": "idle",
                    "stopReason": "error",
                    "error": {"message": str(error), "retryable": retryable},
                },
            )
            return TurnOutcome(stop_reason="error", steps=step, error=error)
        except LspAgentError as error:
            # The store failed (e.g. a full disk): the turn stops with that error. Saying so
            # in the log may fail the same way; recovery then closes the turn on the next open.
            with contextlib.suppress(LspAgentError):
                await self._record_failure(error)
            return TurnOutcome(stop_reason="error", steps=step, error=error)
        except asyncio.CancelledError:
            await asyncio.shield(self._record_cancel())
            raise
        finally:
            if self._tree_task is not None and not self._tree_task.done():
                self._tree_task.cancel()

    async def _reconfigure(self) -> None:
        """Between steps (a safe point): take up the session's current mode and model."""
        if self._refresh is None:
            return
        self._config, self._provider = await self._refresh()
        self._gate.mode = self._config.mode

    async def _end(self, reason: StopReason, steps: int) -> TurnOutcome:
        await self._rec.emit("state_changed", {"state": "idle", "stopReason": reason})
        return TurnOutcome(stop_reason=reason, steps=steps)

    async def _promote_pending(self) -> None:
        for message_id, content in await self._pending_inputs():
            await self._rec.emit(
                "user_message_promoted", {"messageId": message_id, "content": content}
            )
            self._turn_message = message_id

    # -- checkpoints -------------------------------------------------------------------

    async def _track(self) -> str | None:
        """The workspace's tree now, open documents as their buffers hold them (an edit
        made through the editor is in the buffer, not on disk yet); None without snapshots
        (or when they fail: a snapshot problem never stops the agent's work, it only loses
        the undo point)."""
        if self._snapshots is None or not self._config.workspace_roots:
            return None
        root = self._config.workspace_roots[0]
        try:
            overlay = open_in(await self._editor.open_documents(), root)
            return await self._snapshots.track(Path(root), overlay)
        except (LspAgentError, OSError):
            _log.warning("snapshot failed; this step cannot be reverted", exc_info=True)
            return None

    async def _checkpoint_step(self, step_message_id: str) -> None:
        """After a step whose tools may have changed files: what changed, as an event."""
        before = self._tree
        after = await self._track()
        self._tree = after
        if self._snapshots is None or before is None or after is None or before == after:
            return
        root = Path(self._config.workspace_roots[0])
        try:
            changed = await self._snapshots.diff(root, before, after)
            patch = await self._snapshots.patch(root, before, after)
        except (LspAgentError, OSError):
            _log.warning("could not diff the step's snapshots", exc_info=True)
            return
        await self._rec.emit(
            "checkpoint_recorded",
            {
                "checkpointId": self._ids.new("chk"),
                "messageId": self._turn_message or step_message_id,
                "stepMessageId": step_message_id,
                "before": before,
                "after": after,
                "files": files_json(changed),
                "patch": patch[:MAX_PATCH_CHARS],
            },
        )

    async def _pending_inputs(self) -> list[tuple[str, list[dict[str, Any]]]]:
        pending = []
        for message_id in await self._store.pending_inputs(self._session_id):
            pending.append((message_id, await self._store.inbox_content(message_id)))
        return pending

    # -- one step ------------------------------------------------------------------

    async def _step(self, step: int, last: bool) -> _StepState:
        request = await self._request(last)
        try:
            state = await self._stream_once_more_if_dropped(request, step)
        except ContextOverflow as overflow:
            # One compaction and one retry, only because nothing of this step had started.
            if not await self._compact(auto=True, reason="overflow"):
                raise
            request = await self._request(last, allow_compaction=False)
            try:
                state = await self._stream_once_more_if_dropped(request, step)
            except ContextOverflow as again:
                raise ProviderError(
                    "the conversation is still too long for the model after compacting it "
                    f"({again}); start a new session or compact with a smaller "
                    "compaction.keep_recent_tokens",
                    kind="context_overflow",
                    provider=again.provider,
                ) from overflow
        if self._on_first_answer is not None:
            self._on_first_answer()
            self._on_first_answer = None
        await self._record_usage(state.usage)
        await self._rec.emit(
            "assistant_message_ended",
            {"messageId": state.message_id, "status": "completed", "finishReason": state.finish},
        )
        self._open_message = None
        if state.calls and self._tree_task is not None:
            self._tree, self._tree_task = await self._tree_task, None
        for call in state.calls:
            if state.stopped_by_user:
                note = "not run: the user rejected an earlier call of this step"
                await self._tool_update(
                    state.message_id, call.tool_call_id, call.name, status="cancelled", error=note
                )
                continue
            state.stopped_by_user = await self._run_tool(state.message_id, call, refuse=last)
        if any(call.name in MUTATING_TOOLS for call in state.calls):
            await self._checkpoint_step(state.message_id)
        return state

    async def _stream_once_more_if_dropped(self, request: ModelRequest, step: int) -> _StepState:
        try:
            return await self._stream_step(request, step, may_retry=True)
        except _BrokeOff:  # the same request once more
            return await self._stream_step(request, step, may_retry=False)

    async def _stream_step(
        self, request: ModelRequest, step: int, *, may_retry: bool
    ) -> _StepState:
        """Stream one response into a new assistant message.

        Raises ``_BrokeOff`` when the stream broke off after it had started and ``may_retry``:
        the partial message is then recorded as interrupted (its text is never sent to the
        model) and the caller sends the same request again. No tool has run at that point:
        tools only run once a response is complete.
        """
        state = _StepState(message_id=self._ids.new("msg"))
        self._open_message = state.message_id
        await self._rec.emit(
            "assistant_message_started",
            {"messageId": state.message_id, "model": self._config.model.ref, "step": step},
        )
        try:
            async for event in self._stream_with_retry(request):
                await self._on_stream_event(state, event)
            self._check_complete(state)
        except ProviderError as error:
            dropped = error.kind == "stream_dropped"
            if dropped and not may_retry:
                error = ProviderError(
                    f"the model's response broke off twice ({error}); the step was abandoned",
                    kind="stream_dropped",
                    provider=error.provider,
                )
            await self._abandon(state, error, retrying=dropped and may_retry)
            if dropped and may_retry:
                raise _BrokeOff from error
            raise error from None
        return state

    def _check_complete(self, state: _StepState) -> None:
        """A response that ended with a tool call still open is malformed: it counts as
        broken off (sent once more), never as a completed message with a dangling call."""
        ended = {call.tool_call_id for call in state.calls}
        open_calls = [
            data["toolName"]
            for call_id, data in self._open_tools.items()
            if data["messageId"] == state.message_id and call_id not in ended
        ]
        if open_calls:
            raise ProviderError(
                f"the response ended before its {', '.join(open_calls)} call was complete",
                kind="stream_dropped",
                provider=self._provider.name,
            )

    async def _abandon(self, state: _StepState, error: ProviderError, *, retrying: bool) -> None:
        """Close a message whose stream failed; its unfinished tool calls never run."""
        await self._rec.flush()
        for call_id, data in list(self._open_tools.items()):
            if data["messageId"] == state.message_id:
                note = "the response broke off before this call was complete; it was not run"
                await self._tool_update(
                    state.message_id, call_id, data["toolName"], status="cancelled", error=note
                )
        status = "interrupted" if retrying else "failed"
        await self._rec.emit(
            "assistant_message_ended",
            {"messageId": state.message_id, "status": status, "error": str(error)},
        )
        self._open_message = None

    async def _needs_compaction(self, transcript: list[TranscriptMessage]) -> bool:
        """Measured, not guessed: the provider's reported context of the last request plus
        a deliberately high estimate of only what was added since (the messages after the
        last answer). Near the limit, the provider's token counter (where it has one)
        settles it for the whole next request."""
        policy = self._config.compaction
        if not policy.auto or self._usage.context_used == 0:
            return False
        view = current_view(transcript, self._checkpoint)
        last_answer = max(
            (i for i, m in enumerate(view) if m.role == "assistant" and m.status == "completed"),
            default=-1,
        )
        # The answer itself was in the last response; its tool results and all after were not.
        since = fold(view[last_answer:])[1:] if last_answer >= 0 else fold(view)
        added = estimate_tokens(since) * 4 // 3
        limit = self._config.model.context_window - policy.reserve_tokens
        estimate = self._usage.context_used + added
        if estimate < limit * COUNT_FROM or added == 0:
            return estimate > limit
        counted = await self._provider.count_tokens(self._build(transcript, last=False))
        if counted is None:
            return estimate > limit
        return counted + self._config.model.max_output // 4 > limit

    async def _compact(self, *, auto: bool, reason: str) -> bool:
        compactor = Compactor(
            session_id=self._session_id,
            store=self._store,
            provider=_IdleBoundedProvider(self._provider, self._config.retry.stream_idle_timeout),
            recorder=self._rec,
            clock=self._clock,
            sources=self._sources,
            model=self._config.model,
            keep_recent_tokens=self._config.compaction.keep_recent_tokens,
            workspace_roots=self._config.workspace_roots,
        )
        done = await compactor.run(self._checkpoint, self._epoch.number, auto=auto, reason=reason)
        if done is None:
            return False
        self._checkpoint = done.checkpoint
        if done.epoch is not None:
            self._epoch, self._fresh_epoch = done.epoch, True
        return True

    async def _context_epoch(self) -> Epoch:
        """The session's epoch; built now if this is its first model call.

        A source that cannot be read for the first baseline stops the turn before the input
        is promoted: it stays queued and is sent once the source can be read.
        """
        events = await self._store.events(self._session_id)
        self._checkpoint = latest_checkpoint(events)
        self._hidden = hidden_messages(events)
        self._turn_message = next(
            (m for m in reversed(user_message_ids(events)) if m not in self._hidden), None
        )
        epoch = current_epoch(events)
        if epoch is not None:
            self._fresh_epoch = False
            return epoch
        roots = self._config.workspace_roots
        snapshot = await self._sources.collect(roots, full=True)
        unreadable = snapshot.unreadable()
        if unreadable:
            what = "; ".join(f"{s.path}: {s.error}" for s in unreadable)
            raise ContextUnavailable(
                f"cannot read the project instructions ({what}); the message stays queued "
                "and is sent once they can be read"
            )
        epoch = build_baseline(snapshot, local_date(self._clock.now()))
        await self._rec.emit("context_built", epoch.to_json())
        self._fresh_epoch = True
        return epoch

    async def _note_changes(self) -> None:
        """Before a model call: what changed since the epoch's snapshot becomes a note."""
        if self._fresh_epoch:  # just built from these very sources
            self._fresh_epoch = False
            return
        snapshot = await self._sources.collect(self._config.workspace_roots, full=False)
        found = changes(self._epoch, snapshot, local_date(self._clock.now()))
        if found is None:
            return
        note, self._epoch = found
        data = self._epoch.to_json()
        del data["baseline"], data["epoch"]
        await self._rec.emit(
            "context_noted", {"messageId": self._ids.new("msg"), "text": note, **data}
        )

    def _system(self) -> tuple[SystemBlock, ...]:
        """The mode's prompt, then the epoch's baseline: the same bytes all epoch long."""
        return (
            SystemBlock(text=self._config.system_prompt),
            SystemBlock(text=self._epoch.baseline, cache=True),
        )

    async def _request(self, last: bool, *, allow_compaction: bool = True) -> ModelRequest:
        await self._note_changes()
        transcript = await self._store.transcript(self._session_id)
        if (
            allow_compaction
            and await self._needs_compaction(transcript)
            and await self._compact(auto=True, reason="threshold")
        ):
            transcript = await self._store.transcript(self._session_id)
        return self._build(transcript, last=last)

    def _build(self, transcript: list[TranscriptMessage], *, last: bool) -> ModelRequest:
        visible = [m for m in transcript if m.message_id not in self._hidden]
        messages = model_messages(visible, self._checkpoint)
        if last:
            messages = _with_wrap_up(messages, prompts.load("max_steps"))
        return ModelRequest(
            model=self._config.model.model,
            system=self._system(),
            messages=tuple(messages),
            tools=self._offered_tools(),
            tool_choice="none" if last else "auto",
            max_output_tokens=self._config.model.max_output,
            thinking=self._config.thinking,
        )

    async def _stream_with_retry(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        policy = self._config.retry
        attempt = 0
        while True:
            started = False
            try:
                async for event in _idle_bounded(
                    self._provider.stream(request),
                    policy.stream_idle_timeout,
                    provider=self._provider.name,
                ):
                    started = True
                    yield event
                return
            except ProviderError as error:
                if started:
                    broken = _broken_off(error)
                    if broken is error:
                        raise
                    raise broken from error
                if not policy.should_retry(error, attempt):
                    raise
                delay = policy.delay(error, attempt)
                attempt += 1
                retry_at = iso_time(self._clock.now() + delay)
                await self._rec.emit(
                    "state_changed",
                    {
                        "state": "running",
                        "error": {"message": str(error), "retryable": True, "retryAt": retry_at},
                    },
                )
                await self._clock.sleep(delay)

    async def _on_stream_event(self, state: _StepState, event: StreamEvent) -> None:
        if isinstance(event, TextDelta | ReasoningDelta):
            kind: Literal["text_delta", "reasoning_delta"] = (
                "text_delta" if isinstance(event, TextDelta) else "reasoning_delta"
            )
            if state.part_type != kind or state.part_id is None:
                state.part_id, state.part_type = self._ids.new("prt"), kind
            await self._rec.delta(kind, state.message_id, state.part_id, event.text)
        elif isinstance(event, ReasoningEnded):
            part_id = state.part_id if state.part_type == "reasoning_delta" else None
            if part_id is None:
                part_id = self._ids.new("prt")
                await self._rec.delta("reasoning_delta", state.message_id, part_id, "")
            data: dict[str, Any] = {"messageId": state.message_id, "partId": part_id}
            if event.signature is not None:
                data["signature"] = event.signature
            if event.redacted_data is not None:
                data["redactedData"] = event.redacted_data
            await self._rec.emit("reasoning_ended", data)
            state.part_id, state.part_type = None, None
        elif isinstance(event, ToolCallStarted):
            state.part_id, state.part_type = None, None
            call_id = self._call_id(state, event.tool_call_id)
            await self._tool_update(
                state.message_id, call_id, event.name, status="pending", input={}
            )
        elif isinstance(event, ToolCallEnded):
            call = attrs.evolve(event, tool_call_id=self._call_id(state, event.tool_call_id))
            state.calls.append(call)
            await self._tool_update(
                state.message_id, call.tool_call_id, call.name, status="pending", input=call.input
            )
        elif isinstance(event, UsageReported):
            state.usage = event.usage
        elif isinstance(event, Finished):
            state.finish = event.reason

    def _call_id(self, state: _StepState, provider_id: str) -> str:
        """Our own id for a tool call: some servers reuse ids like ``call_0`` every step.

        Providers only need tool calls and results to match within a request, so the
        history sends our id back and the provider's is not kept.
        """
        if provider_id not in state.call_ids:
            state.call_ids[provider_id] = self._ids.new("call")
        return state.call_ids[provider_id]

    # -- tools -------------------------------------------------------------------------

    def _offered_tools(self) -> tuple[ToolSpec, ...]:
        """The tools the mode and the rules leave visible (a ``*`` deny hides a tool)."""
        rules = self._config.captured_rules()
        return tuple(
            spec
            for spec in self._tools.specs()
            if not hidden(permission_key(spec.name), rules) and spec.name not in self._withheld
        )

    def _refusal(self, call: ToolCallEnded, last: bool) -> str | None:
        """Why a call must not run at all, or None."""
        name = call.name
        if last:
            return (
                f"Tools are disabled after the maximum number of steps "
                f"({self._config.max_steps}); the call was not run."
            )
        if call.parse_error is not None:
            return (
                f"The {name} tool was called with arguments that are not valid JSON: "
                f"{call.parse_error}"
            )
        if name in self._withheld:
            first = (
                self._withheld[name].strip().splitlines()[0][:200] if self._withheld[name] else ""
            )
            return (
                f"The {name} tool is withheld for the rest of this turn: it failed "
                f"{BREAKER_LIMIT} times in a row with the same error ({first})."
            )
        offered = [spec.name for spec in self._offered_tools()]
        if name not in offered and name in {spec.name for spec in self._tools.specs()}:
            return (
                f"The {name} tool is not available in {self._config.mode} mode; "
                f"available tools: {', '.join(offered) or 'none'}."
            )
        return None

    async def _run_tool(self, message_id: str, call: ToolCallEnded, *, refuse: bool) -> bool:
        """Run one call; True when the user rejected it without a reason (stop the turn)."""
        call_id, name = call.tool_call_id, call.name
        refused = self._refusal(call, refuse)
        if refused is not None:
            await self._tool_update(message_id, call_id, name, status="failed", error=refused)
            return False
        await self._tool_update(message_id, call_id, name, status="in_progress")
        rules = self._config.captured_rules()

        async def ask(request: PermissionRequest) -> PermissionVerdict:
            return await self._gate.ask(
                request, rules=rules, tool_call_id=call_id, message_id=message_id
            )

        base = {
            "toolCallId": call_id,
            "messageId": message_id,
            "toolName": name,
            "kind": TOOL_KINDS.get(name, "other"),
        }
        events = CallEvents(
            session_id=self._session_id,
            base=base,
            recorder=self._rec,
            editor=self._editor,
            secrets=self._config.secrets,
            subtasks=self._subtasks,
        )
        ctx = ToolCallContext(
            session_id=self._session_id,
            message_id=message_id,
            tool_call_id=call_id,
            workspace_roots=self._config.workspace_roots,
            ask=ask,
            events=events,
        )
        part = ToolCallPart(tool_call_id=call_id, name=name, input=call.input)
        try:
            outcome = await self._tools.execute(part, ctx)
        finally:
            await events.close()
        output = outcome.output
        if outcome.is_error:
            output += await self._breaker(name, outcome.output)
        else:
            self._failures.pop(name, None)
        fields: dict[str, Any] = {"title": outcome.title} if outcome.title else {}
        fields["error" if outcome.is_error else "output"] = output
        status = "failed" if outcome.is_error else "completed"
        # A finished result is recorded even if a cancel arrives meanwhile: never lost.
        await asyncio.shield(self._tool_update(message_id, call_id, name, status=status, **fields))
        return outcome.stop_turn

    async def _breaker(self, name: str, error: str) -> str:
        """Count identical consecutive failures; at the limit, withhold the tool.

        Returns what to tell the model in addition to the error (usually nothing).
        """
        last, count = self._failures.get(name, ("", 0))
        count = count + 1 if error == last else 1
        self._failures[name] = (error, count)
        if count < BREAKER_LIMIT:
            return ""
        self._withheld[name] = error
        await self._rec.emit(
            "tool_withheld", {"toolName": name, "error": error[:500], "failures": count}
        )
        return (
            f"\n\n[The {name} tool failed {count} times in a row with the same error; "
            "it is withheld for the rest of this turn. Do not retry it: change approach or "
            "explain the problem to the user.]"
        )

    async def _tool_update(
        self, message_id: str, call_id: str, name: str, *, status: str, **fields: Any
    ) -> None:
        data = {"toolCallId": call_id, "messageId": message_id, "toolName": name, "status": status}
        data["kind"] = TOOL_KINDS.get(name, "other")
        data.update(fields)
        if status in ("pending", "in_progress"):
            self._open_tools[call_id] = data
        else:
            self._open_tools.pop(call_id, None)
        await self._rec.emit("tool_call_updated", data)

    # -- bookkeeping -------------------------------------------------------------------

    async def _record_usage(self, usage: Usage) -> None:
        model = self._config.model
        before = self._usage
        step_cost = model.cost(usage)
        cost = before.cost
        if step_cost is not None:
            cost = (cost or 0.0) + step_cost
        self._usage = SessionUsage(
            input_tokens=before.input_tokens + usage.input_tokens,
            output_tokens=before.output_tokens + usage.output_tokens,
            cache_read_tokens=before.cache_read_tokens + usage.cache_read_tokens,
            cache_write_tokens=before.cache_write_tokens + usage.cache_write_tokens,
            context_used=usage.context_tokens,
            context_size=model.context_window,
            cost=cost,
        )
        await self._rec.emit("usage_updated", self._usage.to_json())

    async def _record_failure(self, error: LspAgentError) -> None:
        """Like a cancel, but the turn failed: nothing is left open in the log."""
        await self._rec.close()
        if self._open_message is not None:
            await self._rec.emit(
                "assistant_message_ended",
                {"messageId": self._open_message, "status": "failed", "error": str(error)},
            )
            self._open_message = None
        for data in list(self._open_tools.values()):
            was_running = data["status"] == "in_progress"
            status = "interrupted" if was_running else "cancelled"
            await self._rec.emit(
                "tool_call_updated", {**data, "status": status, "error": str(error)}
            )
        self._open_tools.clear()
        await self._rec.emit(
            "state_changed",
            {
                "state": "idle",
                "stopReason": "error",
                "error": {"message": str(error), "retryable": False},
            },
        )

    async def _record_cancel(self) -> None:
        """Leave the log consistent: open message interrupted, running tools interrupted."""
        await self._rec.close()
        if self._open_message is not None:
            await self._rec.emit(
                "assistant_message_ended",
                {"messageId": self._open_message, "status": "interrupted"},
            )
        for data in list(self._open_tools.values()):
            asking = data["toolCallId"] in self._gate.cancelled_while_asking
            was_running = data["status"] == "in_progress" and not asking
            status = "interrupted" if was_running else "cancelled"
            note = "interrupted by the user" if was_running else "cancelled before it ran"
            await self._rec.emit("tool_call_updated", {**data, "status": status, "error": note})
        self._open_tools.clear()
        await self._rec.emit("state_changed", {"state": "idle", "stopReason": "cancelled"})


async def _idle_bounded(
    stream: AsyncIterator[StreamEvent], timeout: float, *, provider: str
) -> AsyncIterator[StreamEvent]:
    """``stream``, failing with a clear error when its next event (the first included) takes
    longer than ``timeout``: a stalled server or proxy can never hang the turn."""
    started = False
    try:
        while True:
            deadline = asyncio.timeout(timeout)
            try:
                async with deadline:
                    event = await anext(stream)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if not deadline.expired():
                    raise
                what = "the response stalled" if started else "the model did not answer"
                raise ProviderError(
                    f"{what}: nothing received for {timeout:g} s (retry.stream_idle_timeout)",
                    kind="stream_dropped" if started else "connection",
                    provider=provider,
                ) from None
            started = True
            yield event
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


@attrs.frozen
class _IdleBoundedProvider:
    """``inner`` with the stream idle timeout on every stream (the compactor's summary call
    is bounded like the turn's own calls)."""

    inner: Provider
    timeout: float

    @property
    def name(self) -> str:
        return self.inner.name

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return _idle_bounded(self.inner.stream(request), self.timeout, provider=self.inner.name)

    async def count_tokens(self, request: ModelRequest) -> int | None:
        return await self.inner.count_tokens(request)


def _broken_off(error: ProviderError) -> ProviderError:
    """A failure after the response had started leaves a partial message: whatever the
    provider called it (an overloaded or server error event mid-stream, a reset), it is
    a broken-off stream, which the loop sends once more."""
    if error.kind == "stream_dropped" or not error.retryable:
        return error
    return ProviderError(
        f"the response stream broke off: {error}",
        kind="stream_dropped",
        status=error.status,
        provider=error.provider,
    )


def _with_wrap_up(messages: list[Message], instruction: str) -> list[Message]:
    """The wrap-up instruction as one more user message (earlier messages stay as sent)."""
    return [*messages, Message(role="user", parts=(TextPart(text=instruction),))]
