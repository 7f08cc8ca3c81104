"""One agent review of a diff: a read-only side request whose findings arrive through a tool.

The model gets the diff and two tools: ``read_file`` (a changed file's text, to see more than
the diff's context) and ``report_finding`` (one problem: where, how bad, what). It may step a
few times (read, report, read again) and ends by answering without a tool call; that answer
is the review's summary. Nothing here can change a file or run a command: the review is
read-only by construction, not by a rule. A model failure is a :class:`ReviewFailed` value.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import Callable
from typing import Any

import attrs

from lsp_agent.code_review.findings import SEVERITIES, Finding, Related, Severity
from lsp_agent.core.errors import ProviderError
from lsp_agent.core.interfaces import Provider
from lsp_agent.core.messages import (
    Message,
    ModelRequest,
    Part,
    SystemBlock,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.stream_events import TextDelta, ToolCallEnded

__all__ = [
    "MAX_DIFF_CHARS",
    "MAX_FINDINGS",
    "MAX_STEPS",
    "ReviewFailed",
    "ReviewResult",
    "changed_files",
    "review_diff",
]

MAX_STEPS = 8
"""Model calls a review may take; the last one is sent with ``tool_choice: none``."""
MAX_DIFF_CHARS = 200_000
"""A longer diff is cut (the model is told)."""
MAX_FINDINGS = 200
MAX_READ_CHARS = 100_000

SYSTEM = """\
You review a developer's code changes, like a careful senior colleague. You are read-only:
you cannot edit files or run commands.

Report each real problem the change introduces — bugs, wrong logic, unhandled errors, security
holes, broken contracts, missing updates elsewhere — with ONE call of `report_finding` per
problem, at the line of the changed file where it is (line numbers of the new version: the
`+` side of the diff). Use `read_file` when the diff's context is not enough. Do not report
style nits or things the change did not touch. When you are done, answer with a one-paragraph
summary of the review (no tool call). If the change is fine, report nothing and say so."""

REPORT_FINDING = ToolSpec(
    name="report_finding",
    description="Report one problem found in the change. Call it once per problem.",
    input_schema={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "The file, relative to the repository root (as in the diff).",
            },
            "line": {
                "type": "integer",
                "minimum": 1,
                "description": "1-based line in the new version of the file.",
            },
            "end_line": {"type": "integer", "minimum": 1, "description": "Last line, if more."},
            "severity": {"type": "string", "enum": list(SEVERITIES)},
            "message": {
                "type": "string",
                "description": "What is wrong and why, in a sentence or two.",
            },
            "related": {
                "type": "array",
                "description": "Other places that matter to this problem.",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "line": {"type": "integer", "minimum": 1},
                        "message": {"type": "string"},
                    },
                    "required": ["path", "line", "message"],
                },
            },
        },
        "required": ["path", "line", "severity", "message"],
    },
    kind="other",
    mutates=False,
    permission=PermissionKind.READ,
)

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file the change touched (its current text, with line numbers).",
    input_schema={
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Relative to the root."}},
        "required": ["path"],
    },
    kind="read",
    mutates=False,
    permission=PermissionKind.READ,
)


@attrs.frozen(kw_only=True)
class ReviewResult:
    findings: tuple[Finding, ...]
    summary: str
    """The model's closing words."""
    files: tuple[str, ...]
    """The changed files (absolute): a rerun replaces the findings of these and the
    previous ones."""


@attrs.frozen(kw_only=True)
class ReviewFailed:
    reason: str
    asked_wrong: bool = False
    """The request's own fault (not a repository, no such revision), not the model's."""


_DIFF_FILE = re.compile(r"^\+\+\+ b/(.+)$", re.MULTILINE)


def changed_files(diff: str, root: str) -> tuple[str, ...]:
    """The files the diff's new side names, absolute (deleted files are left out)."""
    found = [os.path.join(root, m.group(1).rstrip("\t")) for m in _DIFF_FILE.finditer(diff)]
    return tuple(dict.fromkeys(os.path.normpath(p) for p in found))


async def review_diff(
    *,
    provider: Provider,
    model: str,
    diff: str,
    root: str,
    new_id: Callable[[], str],
    max_steps: int = MAX_STEPS,
    max_output_tokens: int = 8192,
    mask: Callable[[str], str] = str,
) -> ReviewResult | ReviewFailed:
    """Review ``diff`` (of the repository at ``root``, realpath-ed) on ``model``. ``mask``:
    the secret filter every text the model gets passes (the diff, a file read)."""
    files = changed_files(diff, root)
    shown = diff if len(diff) <= MAX_DIFF_CHARS else diff[:MAX_DIFF_CHARS]
    cut = "" if shown is diff else "\n[the diff is cut here: it is too long to show whole]"
    prompt = f"Review this change.\n\n```diff\n{mask(shown)}{cut}\n```"
    session = _Review(root=root, files=files, new_id=new_id, mask=mask)
    messages: list[Message] = [Message(role="user", parts=(TextPart(text=prompt),))]
    summary = ""
    for step in range(max(1, max_steps)):
        last = step == max_steps - 1
        request = ModelRequest(
            model=model,
            system=(SystemBlock(text=SYSTEM),),
            messages=tuple(messages),
            tools=(REPORT_FINDING, READ_FILE),
            tool_choice="none" if last else "auto",
            max_output_tokens=max_output_tokens,
        )
        try:
            text, calls = await _respond(provider, request)
        except ProviderError as error:
            return ReviewFailed(reason=f"the model failed: {error}")
        parts: list[Part] = [TextPart(text=text)] if text else []
        parts += [
            ToolCallPart(tool_call_id=c.tool_call_id, name=c.name, input=c.input) for c in calls
        ]
        messages.append(Message(role="assistant", parts=tuple(parts)))
        summary = text.strip() or summary
        if not calls:
            break
        results: list[Part] = []
        for call in calls:
            output, is_error = await session.call(call)
            results.append(
                ToolResultPart(tool_call_id=call.tool_call_id, output=output, is_error=is_error)
            )
        messages.append(Message(role="user", parts=tuple(results)))
    return ReviewResult(findings=tuple(session.findings), summary=summary, files=files)


async def _respond(provider: Provider, request: ModelRequest) -> tuple[str, list[ToolCallEnded]]:
    chunks: list[str] = []
    calls: list[ToolCallEnded] = []
    async for event in provider.stream(request):
        if isinstance(event, TextDelta):
            chunks.append(event.text)
        elif isinstance(event, ToolCallEnded):
            calls.append(event)
    return "".join(chunks), calls


@attrs.define
class _Review:
    root: str
    files: tuple[str, ...]
    new_id: Callable[[], str]
    mask: Callable[[str], str] = str
    findings: list[Finding] = attrs.field(factory=list)

    async def call(self, call: ToolCallEnded) -> tuple[str, bool]:
        """A tool call's result for the model, and whether it is an error."""
        if call.parse_error is not None:
            return f"The arguments were not valid JSON: {call.parse_error}", True
        if call.name == REPORT_FINDING.name:
            return self._report(call.input)
        if call.name == READ_FILE.name:
            return await self._read(call.input)
        return f"Unknown tool {call.name!r}: only report_finding and read_file exist.", True

    def _report(self, given: dict[str, Any]) -> tuple[str, bool]:
        if len(self.findings) >= MAX_FINDINGS:
            return f"At most {MAX_FINDINGS} findings; report only the most important.", True
        path = self._inside(given.get("path"))
        line = given.get("line")
        severity = given.get("severity")
        message = given.get("message")
        if path is None:
            return "path: a file inside the repository, relative to its root.", True
        if not isinstance(line, int) or isinstance(line, bool) or line < 1:
            return "line: a 1-based line number.", True
        if severity not in SEVERITIES:
            return f"severity: one of {', '.join(SEVERITIES)}.", True
        if not isinstance(message, str) or not message.strip():
            return "message: say what is wrong.", True
        end = given.get("end_line")
        end_line = (
            end if isinstance(end, int) and not isinstance(end, bool) and end >= line else line
        )
        finding = Finding(
            id=self.new_id(),
            path=path,
            line=line,
            end_line=end_line,
            severity=_severity(severity),
            message=message.strip(),
            related=tuple(self._related(given.get("related"))),
        )
        self.findings.append(finding)
        return f"Recorded ({finding.id}).", False

    def _related(self, given: object) -> list[Related]:
        found: list[Related] = []
        for item in given if isinstance(given, list) else []:
            if not isinstance(item, dict):
                continue
            path = self._inside(item.get("path"))
            line, message = item.get("line"), item.get("message")
            if path is None or not isinstance(line, int) or line < 1:
                continue
            found.append(Related(path=path, line=line, message=str(message or "")))
        return found

    async def _read(self, given: dict[str, Any]) -> tuple[str, bool]:
        path = self._inside(given.get("path"))
        if path is None or path not in self.files:
            return "path: only the files the change touched can be read.", True
        try:
            text = await asyncio.to_thread(_read_text, path)
        except OSError as error:
            return f"Could not read it: {error.strerror or error}", True
        numbered = "\n".join(f"{n:>5}\t{line}" for n, line in enumerate(text.splitlines(), 1))
        return self.mask(numbered) or "(empty file)", False

    def _inside(self, given: object) -> str | None:
        """``given`` as an absolute, real path inside the root; None when it is not."""
        if not isinstance(given, str) or not given.strip() or "\0" in given:
            return None
        joined = os.path.realpath(os.path.join(self.root, given.strip()))
        return joined if joined.startswith(self.root.rstrip("/") + "/") else None


def _severity(value: str) -> Severity:
    for known in SEVERITIES:
        if known == value:
            return known
    return "warning"


def _read_text(path: str) -> str:
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(0, "not a regular file")
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read(MAX_READ_CHARS)
