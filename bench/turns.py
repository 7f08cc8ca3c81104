"""What one scripted turn's requests say: time to the first request, overhead per step.

The fake LLM logs when each request arrived and when its answer's last byte was written
(CLOCK_MONOTONIC, shared by every process here), so the time between an answer and the next
request is the agent's own work on that step: parse the stream, run the tool, record,
snapshot, ask, rebuild and send the request.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from lsp_agent.testing.fake_llm import RequestRecord


@attrs.frozen(kw_only=True)
class TurnTimes:
    first_request_ms: float
    read_step_ms: float
    edit_step_ms: float
    system_bytes: int
    tools_bytes: int
    requests: int
    last_answer_monotonic: float
    """When the last step's answer was written whole (the end of the agent's wait)."""


def model_requests(records: Sequence[RequestRecord]) -> list[RequestRecord]:
    """The scripted steps (title and other side requests left out)."""
    return [r for r in records if r.turn != "side" and r.kind == "success"]


def system_and_tools_bytes(body: dict[str, Any]) -> tuple[int, int]:
    """Bytes of the system prompt and of the tool definitions in one request body."""
    system: Any = body.get("system")
    if system is None:  # OpenAI: the system prompt is the leading system/developer messages
        system = [m for m in body.get("messages", []) if m.get("role") in ("system", "developer")]
    return len(json.dumps(system).encode()), len(json.dumps(body.get("tools", [])).encode())


def turn_times(records: Sequence[RequestRecord], started: float) -> TurnTimes:
    """The figures of a read → edit → answer turn whose first request came after ``started``."""
    steps = model_requests(records)
    if len(steps) != 3:
        kinds = [(r.turn, r.kind, r.status) for r in records]
        raise RuntimeError(f"expected 3 scripted model requests, saw {len(steps)}: {kinds}")
    first, after_read, after_edit = steps
    first_end, read_end, last_end = (r.ended_monotonic for r in steps)
    if first_end is None or read_end is None or last_end is None:
        raise RuntimeError("an answer was not finished")
    system, tools = system_and_tools_bytes(first.body or {})
    return TurnTimes(
        first_request_ms=(first.arrived_monotonic - started) * 1000,
        read_step_ms=(after_read.arrived_monotonic - first_end) * 1000,
        edit_step_ms=(after_edit.arrived_monotonic - read_end) * 1000,
        system_bytes=system,
        tools_bytes=tools,
        requests=len(steps),
        last_answer_monotonic=last_end,
    )
