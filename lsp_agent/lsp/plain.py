"""What a plain LSP client (no ``initializationOptions.agent``) sees of a turn (protocol.md §9).

Such a client does not know ``agent/session/update``, so each turn becomes a cancellable
work-done progress (``window/workDoneProgress/create`` + ``$/progress`` begin / report /
end, the end message with a preview of the answer; the client's cancel button cancels the
turn). When the turn ends the session's transcript is always written as Markdown outside the
workspace, its path logged (``window/logMessage``) and opened with ``window/showDocument``;
a client that cannot show it (Eglot, kakoune-lsp) gets a ``window/showMessage`` with the
answer's preview and the path instead, and a failed turn always a message with its error.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from lsp_agent.system.atomic import write_atomic
from lsp_agent.system.private_files import PRIVATE_FILE_MODE, private_folder

_log = logging.getLogger(__name__)

SHOW_DOCUMENT_TIMEOUT = 10.0
"""Seconds to wait for ``window/showDocument``'s answer before showing a message instead."""
REPORT_INTERVAL = 0.25
"""Seconds between text "report"s (tool calls are reported at once)."""
PREVIEW_CHARS = 200
"""The answer's preview in the progress end and the message: its first characters."""


class PlainProgress:
    def __init__(
        self,
        *,
        client: Any,
        can_create: bool,
        can_show_document: bool,
        transcript: Callable[[str], Awaitable[str]],
        transcripts_dir: Path,
        cancel: Callable[[str], Awaitable[None]],
        clock: Callable[[], float],
    ) -> None:
        """``transcript(session_id)`` renders the session as Markdown; ``cancel`` stops a
        turn."""
        self._client = client
        self._can_create = can_create
        self._can_show = can_show_document
        self._transcript = transcript
        self._dir = transcripts_dir
        self._cancel = cancel
        self._clock = clock
        self._tokens: dict[str, str] = {}
        self._sessions_by_token: dict[str, str] = {}
        self._last_report: dict[str, float] = {}
        self._answers: dict[str, tuple[str, str]] = {}  # session → (message id, its text)
        self._numbers = itertools.count(1)
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None

    def on_update(self, params: dict[str, Any]) -> None:
        """Called for every ``agent/session/update`` the client would have received."""
        self._queue.put_nowait(params)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._work())

    async def cancelled(self, token: str | int) -> None:
        """``window/workDoneProgress/cancel``: stop that turn."""
        session_id = self._sessions_by_token.get(str(token))
        if session_id is not None:
            await self._cancel(session_id)

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker

    async def _work(self) -> None:
        while not self._queue.empty():
            params = self._queue.get_nowait()
            try:
                await self._handle(params)
            except asyncio.CancelledError:
                raise
            except Exception:
                _log.warning("progress for a plain client failed", exc_info=True)

    async def _handle(self, params: dict[str, Any]) -> None:
        session_id = str(params["sessionId"])
        update = params["update"]
        kind = update.get("sessionUpdate")
        if kind == "state_update":
            state = update.get("state")
            if state == "running" and session_id not in self._tokens:
                await self._begin(session_id)
            elif state == "requires_action":
                self._report(session_id, "waiting for your answer")
            elif state == "idle":
                await self._end(session_id, update)
        elif kind == "tool_call_update" and session_id in self._tokens:
            status = update.get("status")
            if status in ("pending", "in_progress"):
                title = update.get("title") or update.get("toolName", "tool")
                self._report(session_id, f"{update.get('toolName', 'tool')}: {title}")
        elif kind == "agent_message_chunk":
            self._note_answer(session_id, update)
            if session_id not in self._tokens:
                return
            now = self._clock()
            if now - self._last_report.get(session_id, 0.0) >= REPORT_INTERVAL:
                self._last_report[session_id] = now
                self._report(session_id, "writing the answer…")

    async def _begin(self, session_id: str) -> None:
        if not self._can_create:
            return
        token = f"lsp-agent/{session_id}/{next(self._numbers)}"
        try:
            await self._client.request(
                lsp.WINDOW_WORK_DONE_PROGRESS_CREATE, lsp.WorkDoneProgressCreateParams(token=token)
            )
        except Exception as error:
            _log.info("the client refused a progress token: %s", error)
            return
        self._tokens[session_id] = token
        self._sessions_by_token[token] = session_id
        self._progress(
            token,
            lsp.WorkDoneProgressBegin(title="lsp-agent", cancellable=True, message="thinking…"),
        )

    def _report(self, session_id: str, message: str) -> None:
        token = self._tokens.get(session_id)
        if token is not None:
            self._progress(token, lsp.WorkDoneProgressReport(message=message, cancellable=True))

    def _note_answer(self, session_id: str, update: dict[str, Any]) -> None:
        """The beginning of the turn's latest assistant message: as much as its preview
        shows (a long answer is not kept whole)."""
        message_id = str(update.get("messageId", ""))
        text = str(update.get("text", ""))
        current_id, current = self._answers.get(session_id, ("", ""))
        if message_id != current_id:
            self._answers[session_id] = (message_id, text)
        elif len(" ".join(current.split())) <= PREVIEW_CHARS:  # else the preview is cut already
            self._answers[session_id] = (message_id, current + text)

    async def _end(self, session_id: str, update: dict[str, Any]) -> None:
        token = self._tokens.pop(session_id, None)
        reason = str(update.get("stopReason") or "done")
        error = (update.get("error") or {}).get("message")
        preview = _preview(self._answers.pop(session_id, ("", ""))[1])
        detail = error or preview
        message = f"{reason}: {detail}" if detail else reason
        if token is not None:
            self._sessions_by_token.pop(token, None)
            self._progress(token, lsp.WorkDoneProgressEnd(message=message))
        path = await self._write_transcript(session_id)
        shown = path is not None and await self._show_document(path)
        where = f" (the whole conversation: {path})" if path is not None else ""
        if error:
            self._message(lsp.MessageType.Error, f"lsp-agent: {error}{where}")
        elif not shown:
            answer = preview or f"the turn ended ({reason})"
            self._message(lsp.MessageType.Info, f"lsp-agent: {answer}{where}")

    async def _write_transcript(self, session_id: str) -> Path | None:
        """Written whatever the client can show: docs/editors.md sends users to it."""
        path = self._dir / f"{session_id}.md"
        try:
            text = await self._transcript(session_id)
            await asyncio.to_thread(_write, path, text)
        except Exception:
            _log.warning("the transcript could not be written", exc_info=True)
            return None
        self._client.notify(
            lsp.WINDOW_LOG_MESSAGE,
            {"type": lsp.MessageType.Info.value, "message": f"lsp-agent: the transcript is {path}"},
        )
        return path

    async def _show_document(self, path: Path) -> bool:
        if not self._can_show:
            return False
        try:
            result = await asyncio.wait_for(
                self._client.request(
                    lsp.WINDOW_SHOW_DOCUMENT,
                    lsp.ShowDocumentParams(uri=path.as_uri(), take_focus=False),
                ),
                SHOW_DOCUMENT_TIMEOUT,
            )
        except Exception as error:
            _log.info("the client did not show the transcript: %s", error)
            return False
        return bool(getattr(result, "success", True))

    def _message(self, kind: lsp.MessageType, text: str) -> None:
        self._client.notify(lsp.WINDOW_SHOW_MESSAGE, {"type": kind.value, "message": text})

    def _progress(self, token: str, value: Any) -> None:
        self._client.send_progress(token, value)


def _preview(text: str) -> str:
    """The answer on one line, cut at ``PREVIEW_CHARS``."""
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1] + "…"


def _write(path: Path, text: str) -> None:
    """Private (``0600`` in a ``0700`` folder, whatever the umask): a transcript holds the
    whole session."""
    private_folder(path.parent)
    write_atomic(path, text.encode("utf-8"), mode=PRIVATE_FILE_MODE)  # an older, looser one too
