"""A step's tool calls: each refused when it must not run (the last step, arguments that are
not JSON, a withheld tool, one the mode hides), else run through the executor with the
permission gate and its own events; failures are counted by the :class:`ToolBreaker`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from lsp_agent.core import events as ev
from lsp_agent.core.interfaces import Editor, ToolExecutor
from lsp_agent.core.messages import ToolCallPart, ToolSpec
from lsp_agent.core.permission.rules import (
    PermissionRequest,
    PermissionVerdict,
    Rule,
    hidden,
)
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.core.stream_events import ToolCallEnded
from lsp_agent.core.tooling import ToolCallContext
from lsp_agent.core.turn.breaker import BREAKER_LIMIT, ToolBreaker
from lsp_agent.core.turn.call_events import CallEvents, SubtaskRunner
from lsp_agent.core.turn.permission_gate import PermissionGate
from lsp_agent.core.turn.records import TurnRecords


class CallConfig(Protocol):
    """What of the turn's config a step's calls are decided and run by."""

    @property
    def mode(self) -> str: ...
    @property
    def max_steps(self) -> int: ...
    @property
    def workspace_roots(self) -> tuple[str, ...]: ...
    @property
    def secrets(self) -> SecretFilter: ...
    def captured_rules(self) -> tuple[Rule, ...]: ...


class ToolCalls:
    """Runs the tool calls of one turn's steps."""

    def __init__(
        self,
        *,
        session_id: str,
        tools: ToolExecutor,
        gate: PermissionGate,
        editor: Editor,
        recorder: Recorder,
        records: TurnRecords,
        subtasks: SubtaskRunner | None,
    ) -> None:
        self._session_id = session_id
        self._tools = tools
        self._gate = gate
        self._editor = editor
        self._rec = recorder
        self._records = records
        self._subtasks = subtasks
        self._breaker = ToolBreaker()

    def offered(self, rules: tuple[Rule, ...]) -> tuple[ToolSpec, ...]:
        """The tools ``rules`` leave visible (a ``*`` deny hides a tool), minus withheld ones."""
        return tuple(
            spec
            for spec in self._tools.specs()
            if not hidden(spec.permission, rules) and self._breaker.withheld(spec.name) is None
        )

    def may_change_files(self, calls: Sequence[ToolCallEnded]) -> bool:
        """Whether a tool of ``calls`` declares that it may change files (run or not)."""
        mutating = {spec.name for spec in self._tools.specs() if spec.mutates}
        return any(call.name in mutating for call in calls)

    async def run_step(
        self, message_id: str, calls: Sequence[ToolCallEnded], config: CallConfig, *, last: bool
    ) -> bool:
        """Run a step's calls in order (on the ``last`` step each is refused); True when the
        user rejected one without a reason: the calls after it are cancelled, the turn stops."""
        stopped = False
        for call in calls:
            if stopped:
                note = "not run: the user rejected an earlier call of this step"
                await self._records.tool_update(
                    message_id, call.tool_call_id, call.name, status="cancelled", error=note
                )
                continue
            stopped = await self._run(message_id, call, config, refuse=last)
        return stopped

    def _refusal(self, call: ToolCallEnded, config: CallConfig, last: bool) -> str | None:
        """Why a call must not run at all, or None."""
        name = call.name
        if last:
            return (
                f"Tools are disabled after the maximum number of steps "
                f"({config.max_steps}); the call was not run."
            )
        if call.parse_error is not None:
            return (
                f"The {name} tool was called with arguments that are not valid JSON: "
                f"{call.parse_error}"
            )
        withheld = self._breaker.withheld(name)
        if withheld is not None:
            first = withheld.strip().splitlines()[0][:200] if withheld else ""
            return (
                f"The {name} tool is withheld for the rest of this turn: it failed "
                f"{BREAKER_LIMIT} times in a row with the same error ({first})."
            )
        offered = [spec.name for spec in self.offered(config.captured_rules())]
        if name not in offered and name in {spec.name for spec in self._tools.specs()}:
            return (
                f"The {name} tool is not available in {config.mode} mode; "
                f"available tools: {', '.join(offered) or 'none'}."
            )
        return None

    async def _run(
        self, message_id: str, call: ToolCallEnded, config: CallConfig, *, refuse: bool
    ) -> bool:
        """Run one call; True when the user rejected it without a reason (stop the turn)."""
        call_id, name = call.tool_call_id, call.name
        refused = self._refusal(call, config, refuse)
        if refused is not None:
            await self._records.tool_update(
                message_id, call_id, name, status="failed", error=refused
            )
            return False
        await self._records.tool_update(message_id, call_id, name, status="in_progress")
        rules = config.captured_rules()
        refusals: list[PermissionVerdict] = []

        async def ask(request: PermissionRequest) -> PermissionVerdict:
            verdict = await self._gate.ask(
                request, rules=rules, tool_call_id=call_id, message_id=message_id
            )
            if not verdict.allowed:
                refusals.append(verdict)
            return verdict

        base = ev.ToolCallUpdated(
            tool_call_id=call_id,
            message_id=message_id,
            tool_name=name,
            status="in_progress",
            kind=self._records.kind(name),
            title=self._records.title(call_id, name),
        )
        events = CallEvents(
            session_id=self._session_id,
            base=base,
            recorder=self._rec,
            editor=self._editor,
            secrets=config.secrets,
            subtasks=self._subtasks,
        )
        ctx = ToolCallContext(
            session_id=self._session_id,
            message_id=message_id,
            tool_call_id=call_id,
            workspace_roots=config.workspace_roots,
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
            output += await self._count_failure(name, outcome.output)
        else:
            self._breaker.succeeded(name)
        # A finished result is recorded even if a cancel arrives meanwhile: never lost.
        await asyncio.shield(
            self._records.tool_update(
                message_id,
                call_id,
                name,
                status="failed" if outcome.is_error else "completed",
                output=None if outcome.is_error else output,
                error=output if outcome.is_error else None,
                exit_code=outcome.exit_code,
                # a person or a rule said no: not a failure of the tool
                refused=True if outcome.is_error and refusals else None,
            )
        )
        return outcome.stop_turn

    async def _count_failure(self, name: str, error: str) -> str:
        """What to tell the model in addition to the error: usually nothing; at the
        breaker's limit, that the tool is withheld now (and ``tool_withheld`` is recorded)."""
        count = self._breaker.failed(name, error)
        if count is None:
            return ""
        await self._rec.emit(ev.ToolWithheld(tool_name=name, error=error[:500], failures=count))
        return (
            f"\n\n[The {name} tool failed {count} times in a row with the same error; "
            "it is withheld for the rest of this turn. Do not retry it: change approach or "
            "explain the problem to the user.]"
        )
