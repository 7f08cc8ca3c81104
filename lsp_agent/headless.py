"""The terminal adapter for ``lsp-agent run``: an Editor that prints, and asks on a terminal.

The assistant's text streams to stdout; one line per tool call (and retries, errors) goes
to stderr, so ``lsp-agent run … > answer.txt`` captures just the answer. With ``--json``
every committed event is printed as one ``agent/session/update`` params object per line.

Permission asks (contract.md): on a terminal the user picks once / session / always / deny /
deny with a reason. Without one, an ask is rejected with a reason and the turn goes on.
``--yes`` approves asks, except ``external_directory`` and any ask raised in plan mode.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, TextIO

from lsp_agent.core.diagnostics import DiagnosticsCache
from lsp_agent.core.documents import NOT_OPEN, DocumentEditResult
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.permission import OptionKind, PermissionAsk, PermissionReply
from lsp_agent.core.question import Answer, Question, QuestionAsk, QuestionReply
from lsp_agent.core.updates import to_update

_SUMMARY_KEYS = ("file_path", "path", "pattern", "command", "url", "description")
NO_TERMINAL = "not approved: no terminal (use --yes or a permission rule)"
_CHOICES: dict[str, OptionKind] = {
    "y": "allow_once",
    "o": "allow_once",
    "s": "allow_session",
    "a": "allow_always",
    "n": "reject_once",
    "d": "reject_once",
}


class TerminalEditor:
    def __init__(
        self,
        *,
        stdout: TextIO,
        stderr: TextIO,
        json_lines: bool = False,
        approve_asks: bool = False,
        read_line: Callable[[], str] | None = None,
    ) -> None:
        """``read_line`` reads the user's answer from a terminal; None means no terminal."""
        self._out = stdout
        self._err = stderr
        self._json = json_lines
        self._approve = approve_asks
        self._read_line = read_line
        self._mid_line = False
        self._inputs: dict[str, dict[str, Any]] = {}
        self._root: str | None = None

    def focus(self, session_id: str) -> None:
        """Stream only this session's text; subagents' sessions show their tool lines."""
        self._root = session_id

    async def publish(self, event: StoredEvent) -> None:
        if self._json:
            self._out.write(json.dumps(to_update(event), ensure_ascii=False) + "\n")
            self._out.flush()
            return
        if self._root is not None and event.session_id != self._root:
            if event.type == "tool_call_updated":
                self._on_tool_call_updated(event.data, indent="    ")
            return
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event.data)

    async def open_document_text(self, path: str) -> str | None:
        return None  # a terminal has no unsaved buffers

    async def apply_document_edit(
        self, path: str, base_text: str, new_text: str
    ) -> DocumentEditResult:
        return NOT_OPEN  # nothing is open: the tools write the disk

    async def open_documents(self) -> dict[str, str]:
        return {}  # no buffers: snapshots and reverts see the disk only

    @property
    def diagnostics(self) -> DiagnosticsCache | None:
        return None  # no language server reports to a terminal

    @property
    def forwards_diagnostics(self) -> bool:
        return False

    async def request_permission(self, ask: PermissionAsk) -> PermissionReply:
        request = ask.request
        if self._approve:
            if request.permission == "external_directory":
                return _reject("not approved: --yes never approves access outside the workspace")
            if ask.mode == "plan":
                return _reject("not approved: --yes never approves an ask in plan mode")
            return PermissionReply(kind="allow_once")
        if self._read_line is None:
            return _reject(NO_TERMINAL)
        return await self._prompt(ask)

    async def _prompt(self, ask: PermissionAsk) -> PermissionReply:
        request = ask.request
        self._end_line()
        self._say(f"\n? {request.title or request.permission} [{request.permission}]")
        if request.description:
            self._say(f"  {request.description}")
        subject = request.subject or {}
        for key in ("command", "url"):
            if key in subject:
                self._say(f"  {key}: {subject[key]}")
        if subject.get("patch"):
            self._say(str(subject["patch"]).rstrip())
        assert self._read_line is not None
        while True:
            self._err.write("  allow [y]once / [s]ession / [a]lways, [n]o, or [r]eason to deny: ")
            self._err.flush()
            raw = await asyncio.to_thread(self._read_line)
            if not raw:  # end of input: nobody is there to answer
                return _reject("not approved: the terminal closed")
            choice = raw.strip()[:1].lower()
            if choice in _CHOICES:
                return PermissionReply(kind=_CHOICES[choice])
            if choice == "r":
                self._err.write("  reason: ")
                self._err.flush()
                reason = (await asyncio.to_thread(self._read_line)).strip()
                return PermissionReply(kind="reject_once", reason=reason or None)

    async def ask_question(self, ask: QuestionAsk) -> QuestionReply:
        """On a terminal: each question with numbered options; otherwise declined."""
        if self._read_line is None:
            return QuestionReply(outcome="declined")
        self._end_line()
        answers: dict[str, Answer] = {}
        for question in ask.questions:
            answer = await self._ask_one(question)
            if answer is None:
                return QuestionReply(outcome="declined")
            answers[question.question_id] = answer
        return QuestionReply(outcome="answered", answers=answers)

    async def _ask_one(self, question: Question) -> Answer | None:
        title = f"{question.header}: " if question.header else ""
        self._say(f"\n? {title}{question.question}")
        for number, option in enumerate(question.options, start=1):
            more = f" — {option.description}" if option.description else ""
            self._say(f"  {number}. {option.label}{more}")
        hint = "numbers separated by commas" if question.multiple else "a number"
        if question.custom:
            hint += ", or your own answer"
        self._err.write(f"  answer ({hint}; empty to decline): ")
        self._err.flush()
        assert self._read_line is not None
        raw = (await asyncio.to_thread(self._read_line)).strip()
        if not raw:
            return None
        picks = [p.strip() for p in raw.split(",")] if question.multiple else [raw]
        labels = [
            question.options[int(p) - 1].label
            for p in picks
            if p.isdigit() and 1 <= int(p) <= len(question.options)
        ]
        if labels and len(labels) == len(picks):
            return Answer(selected=tuple(labels))
        return Answer(custom=raw) if question.custom else None

    def _on_text_delta(self, data: dict[str, Any]) -> None:
        text: str = data["text"]
        if not text:
            return
        self._out.write(text)
        self._out.flush()
        self._mid_line = not text.endswith("\n")

    def _on_assistant_message_ended(self, data: dict[str, Any]) -> None:
        self._end_line()
        if data.get("status") == "interrupted":
            self._say("[interrupted]")

    def _on_tool_call_updated(self, data: dict[str, Any], indent: str = "") -> None:
        status = data.get("status")
        name = data.get("toolName", "?")
        call_id = data.get("toolCallId", "")
        if "input" in data:
            self._inputs[call_id] = data["input"]
        if status == "in_progress":
            self._say(f"{indent}→ {name} {_summary(self._inputs.get(call_id, {}))}".rstrip())
        elif status in ("failed", "cancelled", "interrupted"):
            error = data.get("error")
            reason = str(error).splitlines()[0] if error else status
            self._say(f"{indent}✗ {name}: {reason}")

    def _on_permission_resolved(self, data: dict[str, Any]) -> None:
        if data.get("state") != "allowed":
            reason = f": {data['reason']}" if data.get("reason") else ""
            self._say(f"  {data.get('permission')} {data.get('state')}{reason}")

    def _on_state_changed(self, data: dict[str, Any]) -> None:
        error = data.get("error")
        if error and error.get("retryAt"):
            self._say(f"retrying at {error['retryAt']}: {error['message']}")

    def _end_line(self) -> None:
        if self._mid_line:
            self._out.write("\n")
            self._out.flush()
            self._mid_line = False

    def _say(self, line: str) -> None:
        self._err.write(line + "\n")
        self._err.flush()


def _reject(reason: str) -> PermissionReply:
    return PermissionReply(kind="reject_once", reason=reason)


def _summary(args: dict[str, Any]) -> str:
    for key in _SUMMARY_KEYS:
        if key in args:
            return str(args[key])
    return ""
