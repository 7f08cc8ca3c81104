"""The script's progress and the request log, behind one lock: the server's event loop takes
steps and writes records while tests on other threads read, wait and replace the script."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Literal

from lsp_agent.testing.fake_llm.completion import ScriptStep, expand_turn
from lsp_agent.testing.fake_llm.http_io import Request
from lsp_agent.testing.fake_llm.records import Provider, RequestRecord
from lsp_agent.testing.fake_llm.script import FimAnswer, Script, ScriptLike, parse_script


class ScriptLog:
    """Which script step comes next, and every request seen, safe to use from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._script = Script()
        self._steps: list[ScriptStep] = []
        self._next_step = 0
        self._next_completion = 0
        self._log: list[RequestRecord] = []
        self._next_seq = 0
        self._holds_begun = 0
        self._releases = 0

    @property
    def script(self) -> Script:
        with self._lock:
            return self._script

    @property
    def requests(self) -> list[RequestRecord]:
        """A snapshot of the request log (copies; safe to read from any thread)."""
        with self._lock:
            return [r.copy() for r in self._log]

    @property
    def remaining_turns(self) -> int:
        """How many script turns have not been (completely) served yet."""
        with self._lock:
            return len({s.turn_index for s in self._steps[self._next_step :]})

    def log_json(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.to_json() for r in self._log]

    def set_script(self, script: ScriptLike) -> None:
        """Replace the script; serving restarts at its first turn. The log is kept."""
        parsed = parse_script(script)
        steps = [step for i, turn in enumerate(parsed.turns) for step in expand_turn(turn, i)]
        with self._lock:
            self._script = parsed
            self._steps = steps
            self._next_step = 0
            self._next_completion = 0

    def release(self) -> None:
        """Let one ``hold_after`` stream go on: the earliest held (or the next to hold)."""
        with self._lock:
            self._releases += 1

    async def hold(self) -> None:
        """Wait until a ``release`` is there for this hold (in the order holds began)."""
        with self._lock:
            self._holds_begun += 1
            ticket = self._holds_begun
        while True:
            with self._lock:
                if self._releases >= ticket:
                    return
            await asyncio.sleep(0.005)

    def clear(self) -> None:
        """Forget logged requests (``seq`` numbers keep increasing)."""
        with self._lock:
            self._log.clear()

    def wait_for(self, count: int, timeout: float, *, finished: bool) -> list[RequestRecord]:
        """Block until ``count`` requests are logged (and finished); other threads only."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self._enough(count, finished):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"fake LLM: {len(self._log)} requests logged, expected {count}"
                    )
                self._changed.wait(remaining)
            return [r.copy() for r in self._log]

    async def wait_for_async(
        self, count: int, timeout: float, *, finished: bool
    ) -> list[RequestRecord]:
        """Like ``wait_for`` but polls without blocking the event loop."""
        async with asyncio.timeout(timeout):
            while True:
                with self._lock:
                    if self._enough(count, finished):
                        return [r.copy() for r in self._log]
                await asyncio.sleep(0.005)

    def _enough(self, count: int, finished: bool) -> bool:
        if len(self._log) < count:
            return False
        return not finished or all(r.ended_monotonic is not None for r in self._log[:count])

    def new_record(
        self, req: Request, provider: Provider | None, body: Any, stream: bool
    ) -> RequestRecord:
        with self._changed:
            record = RequestRecord(
                seq=self._next_seq,
                method=req.method,
                path=req.path,
                query=req.query,
                headers=dict(req.headers),
                body=body,
                body_bytes=len(req.body),
                provider=provider,
                stream=stream,
                connection=req.connection,
                arrived_monotonic=req.arrived_monotonic,
                arrived_wall=req.arrived_wall,
            )
            self._next_seq += 1
            self._log.append(record)
            self._changed.notify_all()
            return record

    def update(self, record: RequestRecord, **changes: Any) -> None:
        with self._changed:
            for key, value in changes.items():
                setattr(record, key, value)
            self._changed.notify_all()

    def finish(self, record: RequestRecord, **changes: Any) -> None:
        self.update(record, ended_monotonic=time.monotonic(), ended_wall=time.time(), **changes)

    def finished(self, record: RequestRecord) -> bool:
        with self._lock:
            return record.ended_monotonic is not None

    def delta_written(self, record: RequestRecord, at: float) -> None:
        with self._lock:
            record.delta_times.append(at)

    def take_step(
        self, record: RequestRecord, is_side: bool
    ) -> ScriptStep | Literal["side"] | None:
        """The step that answers ``record`` (marked on it), ``"side"``, or None: exhausted."""
        with self._changed:
            if is_side and not self._script.side_requests_use_script:
                record.turn = "side"
                record.kind = "side"
                self._changed.notify_all()
                return "side"
            if self._script.by_history:
                index = _assistant_messages(record.body)
                if index >= len(self._steps):
                    record.kind = "exhausted"
                    self._changed.notify_all()
                    return None
                step = self._steps[index]
                self._next_step = max(self._next_step, index + 1)
            elif self._next_step >= len(self._steps):
                record.kind = "exhausted"
                self._changed.notify_all()
                return None
            else:
                step = self._steps[self._next_step]
                self._next_step += 1
            record.turn = step.turn_index
            record.attempt = step.attempt
            record.kind = "error" if step.turn.is_error else "success"
            self._changed.notify_all()
            return step

    def take_completion(self, record: RequestRecord) -> FimAnswer:
        """The answer to a ``/v1/completions`` request (marked on it): the first of the
        script's ``completions`` whose ``prompt_contains`` its prompt holds, else the others
        in order, the last one repeated; never a turn of ``turns``."""
        with self._changed:
            answers = self._script.completions
            prompt = record.body.get("prompt") if isinstance(record.body, dict) else None
            matched = [
                i
                for i, a in enumerate(answers)
                if a.prompt_contains is not None
                and isinstance(prompt, str)
                and a.prompt_contains in prompt
            ]
            ordered = [i for i, a in enumerate(answers) if a.prompt_contains is None]
            if matched:
                index = matched[0]
            elif ordered:
                index = ordered[min(self._next_completion, len(ordered) - 1)]
                self._next_completion += 1
            else:
                index = -1
            record.turn = "completion"
            record.attempt = max(index, 0)
            answer = answers[index] if index >= 0 else FimAnswer()
            record.kind = "error" if answer.status is not None else "completion"
            self._changed.notify_all()
            return answer


def _assistant_messages(body: Any) -> int:
    """How many assistant messages a request's conversation holds (both wire formats)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return 0
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
