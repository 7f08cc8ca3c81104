"""A whole front door in one module: it maps its own small protocol (one JSON line in, one
out) onto :mod:`lsp_agent.runtime` and nothing else — no store, no agent building, no turn
bookkeeping of its own. ``tests/integration/test_runtime_door.py`` runs it as a process
(``python -m tests.support.tiny_door``) against the fake LLM, the way ``serve`` and ``acp``
run: the recipe in docs/architecture.md "Front doors", made true.

Requests: ``{"do": "new"}``, ``{"do": "prompt", "session": S, "text": T, "id": C}``,
``{"do": "prompt_twice", …}`` (the same prompt sent twice at once), ``{"do": "idle",
"session": S}``, ``{"do":
"cancel", "session": S}``, ``{"do": "running", "session": S}``, ``{"do": "list"}``,
``{"do": "delete", "session": S}``, ``{"do": "updates", "session": S}``. Each answer is
``{"ok": …}`` or ``{"error": "<class name>"}``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from lsp_agent.app import AgentInputs
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.interfaces import Editor
from lsp_agent.runtime.host import AgentPlan, Runtime
from lsp_agent.testing.editor import RecordingEditor

WAIT = 60.0


class _Updates(RecordingEditor):
    """The door's side of the core's ports: each event becomes the door's update shape."""

    def __init__(self) -> None:
        super().__init__()
        self.updates: list[dict[str, Any]] = []

    async def publish(self, event: StoredEvent) -> None:
        await super().publish(event)
        update = {"session": event.session_id, "seq": event.seq, "kind": event.type}
        if event.type == "assistant_message_ended":
            update["status"] = event.data.get("status")
        self.updates.append(update)


class TinyDoor:
    def __init__(self, runtime: Runtime, updates: _Updates, folder: str) -> None:
        self.runtime = runtime
        self.updates = updates
        self.folder = folder

    async def handle(self, request: dict[str, Any]) -> Any:
        do, session = request["do"], request.get("session", "")
        if do == "new":
            return await self.runtime.create(self.folder)
        if do == "prompt":
            return await self._prompt(session, request["text"], request["id"])
        if do == "prompt_twice":
            return await asyncio.gather(
                self._prompt(session, request["text"], request["id"]),
                self._prompt(session, request["text"], request["id"]),
            )
        if do == "idle":
            return await self._until(lambda: not self.runtime.turns.running(session))
        if do == "running":
            return self.runtime.turns.running(session)
        if do == "cancel":
            return await self.runtime.turns.cancel(session)
        if do == "list":
            page = await self.runtime.sessions.page(Path(self.folder).as_uri(), None, None)
            return [info.session_id for info in page.sessions]
        if do == "delete":
            return await self.runtime.sessions.delete(session)
        if do == "updates":
            return [u for u in self.updates.updates if u["session"] == session]
        raise ValueError(do)

    async def _prompt(self, session_id: str, text: str, message_id: str) -> dict[str, Any]:
        info = await self.runtime.sessions.require(session_id)
        content = [{"type": "text", "text": text}]
        admitted = await self.runtime.prompts.submit(info, content, client_message_id=message_id)
        return {"id": admitted.message_id, "queued": admitted.queued}

    @staticmethod
    async def _until(done: Any) -> bool:
        for _ in range(int(WAIT / 0.02)):
            if done():
                return True
            await asyncio.sleep(0.02)
        return False


async def serve(folder: str) -> None:
    env = dict(os.environ)
    updates = _Updates()
    editor: Editor = updates

    def plan(path: str) -> AgentPlan:
        return AgentPlan(inputs=AgentInputs(workspace=Path(path), env=env), editor=editor)

    runtime = await Runtime.open(env, plan=plan)
    door = TinyDoor(runtime, updates, folder)
    try:
        while line := await asyncio.to_thread(sys.stdin.readline):
            try:
                answer: dict[str, Any] = {"ok": await door.handle(json.loads(line))}
            except Exception as error:  # the door's one error mapping
                answer = {"error": type(error).__name__}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    finally:
        await runtime.aclose()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1]))
