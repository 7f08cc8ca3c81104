"""What a turn has open in the log — its assistant message, its tool calls — and the usage it
adds up. These are queued on the recorder (committed with the next commit, in order): nothing
waits on them, and the turn's ends (:meth:`failed`, :meth:`cancelled`) commit them first.

Every change of a tool call goes through :meth:`TurnRecords.tool_update`, so the records know
which calls are still pending or running; when the turn fails or is cancelled they are closed
(interrupted or cancelled, with the reason), and the log never keeps a message or a call that
looks as if it were still running.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from lsp_agent.core import events as ev
from lsp_agent.core.errors import LspAgentError
from lsp_agent.core.messages import ToolKind, ToolSpec, Usage
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.transcript import SessionUsage


class TurnRecords:
    """``tools``: the offered tools by name (a call of a tool not in it is ``other``, titled
    with its name); ``roots``: the workspace folders, for the tools' titles."""

    def __init__(
        self, *, recorder: Recorder, tools: Mapping[str, ToolSpec], roots: Sequence[str] = ()
    ) -> None:
        self._rec = recorder
        self._tools = tools
        self._roots = tuple(roots)
        self._open_message: str | None = None
        self._open_tools: dict[str, ev.ToolCallUpdated] = {}  # call id → its latest update
        self._titles: dict[str, str] = {}  # call id → its title, while it is open
        self.usage = SessionUsage()
        """The session's usage so far (the turn starts from the stored one)."""

    def kind(self, name: str) -> ToolKind:
        spec = self._tools.get(name)
        return spec.kind if spec is not None else "other"

    def title(self, call_id: str, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """The call's title: the tool's own words once its input fits (kept from then on),
        else the tool's name."""
        spec = self._tools.get(name)
        if arguments and spec is not None and spec.describe is not None:
            described = spec.describe(arguments, self._roots)
            if described:
                self._titles[call_id] = described
        return self._titles.get(call_id, name)

    async def message_started(self, message_id: str, *, model: str, step: int) -> None:
        self._open_message = message_id
        await self._rec.record(
            ev.AssistantMessageStarted(message_id=message_id, model=model, step=step)
        )

    async def message_ended(
        self,
        message_id: str,
        *,
        status: ev.MessageStatus,
        finish_reason: str | None = None,
        error: str | None = None,
    ) -> None:
        await self._rec.record(
            ev.AssistantMessageEnded(
                message_id=message_id, status=status, finish_reason=finish_reason, error=error
            )
        )
        self._open_message = None

    async def tool_update(
        self,
        message_id: str,
        call_id: str,
        name: str,
        *,
        status: ev.ToolCallStatus,
        input: ev.JsonObject | None = None,
        output: str | None = None,
        error: str | None = None,
        exit_code: int | None = None,
        refused: bool | None = None,
    ) -> None:
        """Record a change of the call; every update carries its :meth:`title`."""
        call = ev.ToolCallUpdated(
            tool_call_id=call_id,
            message_id=message_id,
            tool_name=name,
            status=status,
            kind=self.kind(name),
            title=self.title(call_id, name, input),
            input=input,
            output=output,
            error=error,
            exit_code=exit_code,
            refused=refused,
        )
        if status in ("pending", "in_progress"):
            self._open_tools[call_id] = call
        else:
            self._open_tools.pop(call_id, None)
            self._titles.pop(call_id, None)
        await self._rec.record(call)

    def open_calls(self, message_id: str) -> list[tuple[str, str]]:
        """(call id, tool name) of each call of ``message_id`` that has not ended."""
        return [
            (call_id, call.tool_name)
            for call_id, call in self._open_tools.items()
            if call.message_id == message_id
        ]

    async def add_usage(self, usage: Usage, model: ModelInfo) -> None:
        """One response's usage (and cost, where the model has prices) added up."""
        before = self.usage
        step_cost = model.cost(usage)
        cost = before.cost
        if step_cost is not None:
            cost = (cost or 0.0) + step_cost
        self.usage = SessionUsage(
            input_tokens=before.input_tokens + usage.input_tokens,
            output_tokens=before.output_tokens + usage.output_tokens,
            cache_read_tokens=before.cache_read_tokens + usage.cache_read_tokens,
            cache_write_tokens=before.cache_write_tokens + usage.cache_write_tokens,
            context_used=usage.context_tokens,
            context_size=model.context_window,
            cost=cost,
        )
        await self._rec.record(_usage_event(self.usage))

    async def failed(self, error: LspAgentError) -> None:
        """Like a cancel, but the turn failed: nothing is left open in the log."""
        await self._rec.close()
        if self._open_message is not None:
            await self.message_ended(self._open_message, status="failed", error=str(error))
        for call in list(self._open_tools.values()):
            was_running = call.status == "in_progress"
            status: ev.ToolCallStatus = "interrupted" if was_running else "cancelled"
            await self._rec.emit(dataclasses.replace(call, status=status, error=str(error)))
        self._open_tools.clear()
        await self._rec.emit(
            ev.StateChanged(
                state="idle",
                stop_reason="error",
                error={"message": str(error), "retryable": False},
            )
        )

    async def cancelled(self, asking: Collection[str]) -> None:
        """Leave the log consistent: the open message interrupted, running tools interrupted,
        the others (``asking``: waiting for a permission answer) cancelled before they ran."""
        await self._rec.close()
        if self._open_message is not None:
            await self._rec.emit(
                ev.AssistantMessageEnded(message_id=self._open_message, status="interrupted")
            )
        for call in list(self._open_tools.values()):
            was_running = call.status == "in_progress" and call.tool_call_id not in asking
            status: ev.ToolCallStatus = "interrupted" if was_running else "cancelled"
            note = "interrupted by the user" if was_running else "cancelled before it ran"
            await self._rec.emit(dataclasses.replace(call, status=status, error=note))
        self._open_tools.clear()
        await self._rec.emit(ev.StateChanged(state="idle", stop_reason="cancelled"))


def _usage_event(usage: SessionUsage) -> ev.UsageUpdated:
    return ev.UsageUpdated(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        context_used=usage.context_used,
        context_size=usage.context_size,
        cost=usage.cost,
    )
