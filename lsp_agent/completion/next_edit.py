"""Next-edit suggestions: after an edit pauses, the one edit that likely comes next anywhere in
the file (the other call sites of a renamed parameter, the line that must follow a change).

The model is shown the file with line numbers, its recent edits (``history.py``) and the
agent's task, and asked for one edit in a strict small format::

    EDIT 12-13
    <the new text of lines 12 to 13>
    END
    REASON: rename x → y

The answer is parsed defensively: anything else, a range outside the document, or an edit that
changes nothing is dropped (None). The edit is narrowed to the part that differs, and it is
answered only if the document is still at the version it was asked for."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

import attrs

from lsp_agent.completion.budget import TokenCap
from lsp_agent.completion.cache import Lru
from lsp_agent.completion.exclusion import Exclusions
from lsp_agent.completion.history import Edit, EditHistory
from lsp_agent.completion.inline import Cursor
from lsp_agent.completion.model import CompletionModel
from lsp_agent.completion.task import FolderTasks
from lsp_agent.core.errors import LspAgentError
from lsp_agent.core.interfaces import IdFactory

_log = logging.getLogger(__name__)

ANSWER_TOKENS = 320
FILE_CHARS = 12_000
"""The numbered file shown, around the cursor when it is longer."""

SYSTEM = (
    "You predict the next edit a programmer makes in a file, continuing the edits they just "
    "made (and the agent's task, when one is given): the other places a rename or a changed "
    "signature must follow, the line that must change with the one just changed. Answer in "
    "exactly this format and nothing else:\n"
    "EDIT <first line>-<last line>\n"
    "<the new text of those lines>\n"
    "END\n"
    "REASON: <a few words, e.g. rename x → y>\n"
    "Line numbers are the ones shown (1-based, inclusive); the new text replaces those whole "
    "lines. Never repeat an edit already made. If no edit clearly comes next, answer NONE."
)

_ANSWER = re.compile(
    r"EDIT[ \t]+(\d+)[ \t]*-[ \t]*(\d+)[ \t]*\r?\n(.*?)(?:\r?\n)?END[ \t]*(?:\r?\n|$)", re.DOTALL
)
_REASON = re.compile(r"^REASON:[ \t]*(.+?)[ \t]*$", re.MULTILINE)


@attrs.frozen(kw_only=True)
class EditSuggestion:
    id: str
    uri: str
    version: int
    start: tuple[int, int]
    """(line, column) of the replaced text, columns as indexes into the line."""
    end: tuple[int, int]
    new_text: str
    reason: str
    old_text: str


@attrs.frozen(kw_only=True)
class ParsedEdit:
    first: int
    """1-based, inclusive."""
    last: int
    text: str
    reason: str


def parse_answer(answer: str) -> ParsedEdit | None:
    """The one edit of an answer in the format of :data:`SYSTEM`, or None."""
    text = answer.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text[: text.rfind("```")] if "```" in text else text
    found = _ANSWER.search(text)
    if found is None:
        return None
    first, last = int(found.group(1)), int(found.group(2))
    if first < 1 or last < first:
        return None
    reason = _REASON.search(text, found.end())
    return ParsedEdit(
        first=first,
        last=last,
        text=found.group(3),
        reason=reason.group(1)[:200] if reason else "",
    )


def to_suggestion_span(
    text: str, parsed: ParsedEdit
) -> tuple[tuple[int, int], tuple[int, int], str, str] | None:
    """The parsed whole-line edit on ``text`` narrowed to the part that differs: (start, end,
    new text, old text), or None when it is outside the document or changes nothing."""
    lines = text.split("\n")
    if parsed.last > len(lines):
        return None
    old = "\n".join(lines[parsed.first - 1 : parsed.last])
    new = parsed.text
    if new == old:
        return None
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-tail - 1] == new[-tail - 1]:
        tail += 1
    # Whole words: `uid` → `user_id`, not an insertion of `ser_`.
    while head > 0 and _word(old[head - 1]):
        head -= 1
    while tail > 0 and _word(old[len(old) - tail]):
        tail -= 1
    start = _position(old, head, parsed.first - 1)
    end = _position(old, len(old) - tail, parsed.first - 1)
    return start, end, new[head : len(new) - tail], old[head : len(old) - tail]


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _position(block: str, offset: int, first_line: int) -> tuple[int, int]:
    before = block[:offset]
    line = first_line + before.count("\n")
    column = len(before) - (before.rfind("\n") + 1)
    return line, column


def numbered(text: str, cursor_line: int, budget: int = FILE_CHARS) -> str:
    """The file with 1-based line numbers; around ``cursor_line`` when it is too long."""
    lines = text.split("\n")
    if len(text) > budget:
        reach = max(20, budget // max(1, 2 * (len(text) // max(1, len(lines)) + 6)))
        low, high = max(0, cursor_line - reach), min(len(lines), cursor_line + reach)
    else:
        low, high = 0, len(lines)
    return "\n".join(f"{n + 1:>5}| {lines[n]}" for n in range(low, high))


def describe_edits(edits: list[Edit]) -> str:
    lines = []
    for edit in edits:
        old = edit.old.strip().replace("\n", "⏎") or "(nothing)"
        new = edit.new.strip().replace("\n", "⏎") or "(nothing)"
        lines.append(f"- line {edit.line + 1}: `{old[:80]}` → `{new[:80]}`")
    return "\n".join(lines)


class NextEdits:
    def __init__(
        self,
        *,
        model: CompletionModel,
        exclusions: Exclusions,
        tasks: FolderTasks | None,
        history: EditHistory,
        ids: IdFactory,
        cap: TokenCap,
        version_of: Callable[[str], int | None],
    ) -> None:
        self._model = model
        self._exclusions = exclusions
        self._tasks = tasks
        self._history = history
        self._ids = ids
        self._cap = cap
        self._version_of = version_of
        self.shown: Lru[EditSuggestion] = Lru(256)

    async def suggest(self, cursor: Cursor) -> EditSuggestion | None:
        """The next edit in the document at ``cursor``, or None."""
        if cursor.path is None:
            return None
        cursor_line = cursor.text.count("\n", 0, cursor.offset)
        shown = numbered(cursor.text, cursor_line)
        if await self._exclusions.reason(cursor.path, shown) is not None:
            return None
        if not self._cap.allows():
            return None
        place = self._exclusions.place(cursor.path)
        folder, relative = place if place is not None else ("", cursor.path)
        task = ""
        if self._tasks is not None and folder:
            try:
                task = (await self._tasks.note(folder)).render()
            except LspAgentError as error:
                _log.warning("next edit without the agent's task: %s", error)
        edits = self._history.edits(cursor.uri)
        parts = [f"File {relative}:", shown, ""]
        if edits:
            parts += ["Recent edits (oldest first):", describe_edits(edits), ""]
        if task:
            parts += [task, ""]
        parts.append(f"The cursor is on line {cursor_line + 1}. What is the next edit?")
        try:
            answer = await self._model.instruct(SYSTEM, "\n".join(parts), ANSWER_TOKENS)
        except LspAgentError as error:
            _log.warning("next-edit suggestion failed: %s", error)
            return None
        self._cap.add(answer.tokens)
        parsed = parse_answer(answer.text)
        span = to_suggestion_span(cursor.text, parsed) if parsed is not None else None
        if parsed is None or span is None:
            return None
        if self._version_of(cursor.uri) not in (cursor.version, None):
            return None  # the document moved on while the model thought
        start, end, new_text, old_text = span
        suggestion = EditSuggestion(
            id=self._ids.new("nxe"),
            uri=cursor.uri,
            version=cursor.version,
            start=start,
            end=end,
            new_text=new_text,
            reason=parsed.reason,
            old_text=old_text,
        )
        self.shown.put(suggestion.id, suggestion)
        return suggestion
