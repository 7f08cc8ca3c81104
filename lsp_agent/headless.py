"""The terminal adapter for ``lsp-agent run``: an Editor that prints, and asks on a terminal.

The assistant's text streams to stdout; everything else goes to stderr, so
``lsp-agent run … > answer.txt`` captures just the answer. On stderr each tool call gets one
line when it starts, in the tool's own words (``→ Run ls``), and, if it fails or is refused,
one line saying why (``✗ …``); a command's output (the ``bash`` tool) follows its line when
it ends, its last :data:`OUTPUT_TAIL_LINES` lines indented (dimmed on a colour terminal),
ending with the exit code. With ``--json`` every committed event is printed as one
``agent/session/update`` params object per line instead. Model and tool text is printed through
:mod:`lsp_agent.display`: control characters appear escaped, never interpreted.

Permission asks (docs/permissions.md): on a terminal the user picks once / session / always
/ deny / deny with a reason. Without one, an ask is rejected with a reason and the turn goes
on. ``--yes`` approves asks, except ``external_directory`` and any ask raised in plan mode.
:attr:`TerminalEditor.refused_asks` counts the asks answered "no" (the CLI's exit status 4).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import TextIO

from lsp_agent.core import events as ev
from lsp_agent.core.diagnostics import DiagnosticsCache
from lsp_agent.core.documents import NOT_OPEN, DocumentEditResult
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.modes import yes_approves
from lsp_agent.core.permission.rules import OptionKind, PermissionAsk, PermissionReply
from lsp_agent.core.permission.subjects import CommandSubject, EditSubject, FetchSubject
from lsp_agent.core.question import Answer, Question, QuestionAsk, QuestionReply
from lsp_agent.core.transcript import SessionInfo
from lsp_agent.display import block, one_line
from lsp_agent.wire.updates import to_update

NO_TERMINAL = "not approved: no terminal (use --yes or a permission rule)"
OUTPUT_TAIL_LINES = 10
"""How many of a command's last output lines are shown under its tool line."""
_LINE_CHARS = 240
_SHOWS_OUTPUT = frozenset({"execute"})
_DIM, _RESET = "\x1b[2m", "\x1b[0m"
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
        color: bool = False,
    ) -> None:
        """``read_line`` reads the user's answer from a terminal; None means no terminal.
        ``color``: stderr is a colour terminal (command output is dimmed)."""
        self._out = stdout
        self._err = stderr
        self._json = json_lines
        self._approve = approve_asks
        self._read_line = read_line
        self._color = color
        self._mid_line = False
        self._started: set[str] = set()
        self._refusals: dict[str, str] = {}
        self._root: str | None = None
        self.refused_asks = 0
        """Permission asks answered "no" (by the user, or because nobody could answer)."""

    def focus(self, session_id: str) -> None:
        """Stream only this session's text; subagents' sessions show their tool lines."""
        self._root = session_id

    async def publish(self, event: StoredEvent) -> None:
        if self._json:
            self._out.write(json.dumps(to_update(event), ensure_ascii=False) + "\n")
            self._out.flush()
            return
        subagent = self._root is not None and event.session_id != self._root
        match event.event:
            case ev.ToolCallUpdated() as call:
                self._on_tool_call_updated(call, indent="    " if subagent else "")
            case ev.PermissionResolved() as resolved:
                self._on_permission_resolved(resolved)
            case ev.TextDelta(text=text) if not subagent:
                self._on_text_delta(text)
            case ev.AssistantMessageEnded(status=status) if not subagent:
                self._on_assistant_message_ended(status)
            case ev.StateChanged(error=error) if not subagent and error is not None:
                self._on_state_error(error)

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
        reply = await self._answer(ask)
        if reply.kind == "reject_once":
            self.refused_asks += 1
        return reply

    async def _answer(self, ask: PermissionAsk) -> PermissionReply:
        request = ask.request
        if request.protected:  # a person, or nobody: never --yes
            if self._read_line is None:
                return _reject(protected_refusal(request.protected))
            return await self._prompt(ask)
        if self._approve:
            if request.permission == "external_directory":
                return _reject("not approved: --yes never approves access outside the workspace")
            if not yes_approves(ask.mode):
                return _reject(f"not approved: --yes never approves an ask in {ask.mode} mode")
            if request.unjudged:
                return _reject("not approved: --yes never approves what cannot be judged")
            return PermissionReply(kind="allow_once")
        if self._read_line is None:
            return _reject(NO_TERMINAL)
        return await self._prompt(ask)

    async def _prompt(self, ask: PermissionAsk) -> PermissionReply:
        self._end_line()
        for line in render_ask(ask):
            self._say(line)
        assert self._read_line is not None
        offered = {option.kind for option in ask.options}
        once_only = not offered & {"allow_session", "allow_always"}  # a protected file
        while True:
            if once_only:
                self._err.write("  allow [y]once, [n]o, or [r]eason to deny: ")
            else:
                self._err.write(
                    "  allow [y]once / [s]ession / [a]lways, [n]o, or [r]eason to deny: "
                )
            self._err.flush()
            raw = await asyncio.to_thread(self._read_line)
            if not raw:  # end of input: nobody is there to answer
                return _reject("not approved: the terminal closed")
            choice = raw.strip()[:1].lower()
            if choice in _CHOICES and _CHOICES[choice] in offered:
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
        title = f"{one_line(question.header)}: " if question.header else ""
        self._say(f"\n? {title}{one_line(question.question)}")
        for number, option in enumerate(question.options, start=1):
            more = f" — {one_line(option.description)}" if option.description else ""
            self._say(f"  {number}. {one_line(option.label)}{more}")
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

    def _on_text_delta(self, text: str) -> None:
        if not text:
            return
        self._out.write(block(text))
        self._out.flush()
        self._mid_line = not text.endswith("\n")

    def _on_assistant_message_ended(self, status: str) -> None:
        self._end_line()
        if status == "interrupted":
            self._say("[interrupted]")

    def _on_tool_call_updated(self, call: ev.ToolCallUpdated, indent: str) -> None:
        status = call.status
        call_id = call.tool_call_id
        line = one_line(call.title or call.tool_name)
        if status == "in_progress":
            if call_id not in self._started:  # later updates only carry streamed output
                self._started.add(call_id)
                self._end_line()
                self._say(f"{indent}→ {line}")
            return
        if status == "completed":
            if call.kind in _SHOWS_OUTPUT and call.output is not None:
                self._show_output(call.output, indent + "    ")
        elif status in ("failed", "cancelled", "interrupted"):
            refusal = self._refusals.pop(call_id, None)
            reason = refusal or (call.error or "").strip().split("\n")[0] or status
            self._end_line()
            self._say(f"{indent}✗ {line}: {one_line(reason)}")
        if status not in ("pending", "in_progress"):
            self._started.discard(call_id)

    def _show_output(self, output: str, indent: str) -> None:
        lines = output.rstrip("\n").split("\n")  # not splitlines(): a \r is shown, not split on
        shown = lines[-OUTPUT_TAIL_LINES:]
        if len(lines) > len(shown):
            self._say(self._dim(f"{indent}… {len(lines) - len(shown)} earlier lines"))
        for raw in shown:
            text = block(raw.expandtabs(4).rstrip())
            if len(text) > _LINE_CHARS:
                text = text[:_LINE_CHARS] + "…"
            self._say(self._dim(f"{indent}{text}".rstrip()))

    def _on_permission_resolved(self, resolved: ev.PermissionResolved) -> None:
        """Kept for the call's ``✗`` line, so a refusal is printed once, where it ends."""
        if resolved.state == "allowed":
            return
        reason = resolved.reason or f"{resolved.permission} {resolved.state}"
        self._refusals[resolved.tool_call_id] = reason

    def _on_state_error(self, error: ev.StateError) -> None:
        retry_at = error.get("retryAt")
        if retry_at:
            self._say(f"retrying at {retry_at}: {one_line(str(error['message']))}")

    def _dim(self, text: str) -> str:
        return f"{_DIM}{text}{_RESET}" if self._color else text

    def end_line(self) -> None:
        """End a line of streamed text, so the caller's own line starts a line."""
        self._end_line()

    def _end_line(self) -> None:
        if self._mid_line:
            self._out.write("\n")
            self._out.flush()
            self._mid_line = False

    def _say(self, line: str) -> None:
        self._err.write(line + "\n")
        self._err.flush()


def render_ask(ask: PermissionAsk) -> list[str]:
    """The lines a terminal shows for a permission ask, every model-made value escaped."""
    request = ask.request
    title = one_line(request.title or request.permission)
    lines = [f"\n? {title} [{one_line(request.permission)}]"]
    if request.description:
        lines.append(f"  {one_line(request.description)}")
    match request.subject:
        case CommandSubject(command=command):
            lines.append(f"  command: {one_line(command)}")
        case FetchSubject(url=url):
            lines.append(f"  url: {one_line(url)}")
        case EditSubject(patch=patch) if patch:
            lines.append(block(patch.rstrip()))
    saves = ", ".join(one_line(pattern) for pattern in request.saves)
    if request.protected:
        lines.append("  protected: it can make programs run later, so it is asked every time")
    elif saves:
        lines.append(f"  [s]ession / [a]lways save: {one_line(request.permission)} {saves}")
    else:
        lines.append("  [s]ession / [a]lways save nothing: this can only be allowed once")
    return lines


def run_summary(info: SessionInfo) -> str:
    """The line ``run`` ends with on stderr: the session (for ``--session``) and its usage."""
    usage = info.usage
    tokens = f"{usage.input_tokens:,} in, {usage.output_tokens:,} out"
    if usage.cache_read_tokens or usage.cache_write_tokens:
        tokens += (
            f" ({usage.cache_read_tokens:,} cache read, {usage.cache_write_tokens:,} cache write)"
        )
    cost = f" · ${usage.cost:.4f}" if usage.cost is not None else ""
    return f"session {info.session_id} · {tokens} tokens{cost}"


def protected_refusal(protected: Sequence[str]) -> str:
    """What the model reads when a protected write cannot be put to a person."""
    names = ", ".join(line.split(": ", 1)[0] for line in protected)
    return (
        f"not approved: {names} is protected (it can make programs run later), so only a "
        "person at the terminal may approve writing it, each time; --yes and saved approvals "
        "never do, and this run has no terminal. Do not try another way to change it: tell "
        "the user the exact change and why, and let them make it or run again interactively"
    )


def _reject(reason: str) -> PermissionReply:
    return PermissionReply(kind="reject_once", reason=reason)
