"""What a suggestion is asked from: the text around the cursor (budgeted), a few related open
buffers (their symbol lines, budgeted), and the agent's task. Cheap string work: it runs on
every pause in typing."""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

PREFIX_CHARS = 6000
SUFFIX_CHARS = 2000
RELATED_CHARS = 2400
RELATED_BUFFERS = 3
TASK_CHARS = 1600

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_SYMBOL_LINE = re.compile(
    r"^\s*(?:export\s+)?(?:pub(?:\([a-z]+\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function|fn|func|interface|type|struct|enum|trait|impl|const|let|var|module)\b"
)


@attrs.frozen(kw_only=True)
class Buffer:
    """An open document other than the one being typed in."""

    path: str
    """Relative to the workspace folder."""
    text: str


@attrs.frozen(kw_only=True)
class TaskNote:
    """The agent's task in the folder's active session, as the model is shown it."""

    plan: tuple[str, ...] = ()
    """Unfinished plan entries, in order."""
    hunks: tuple[tuple[str, str], ...] = ()
    """Pending hunks: (path, their new text)."""

    def render(self, budget: int = TASK_CHARS) -> str:
        lines: list[str] = []
        if self.plan:
            lines.append("The agent's plan (unfinished):")
            lines.extend(f"- {entry}" for entry in self.plan)
        for path, text in self.hunks:
            lines.append(f"The agent changed {path} (pending review):")
            lines.extend(f"  {line}" for line in text.splitlines()[:12])
        return _clip("\n".join(lines), budget)


@attrs.frozen(kw_only=True)
class CompletionContext:
    path: str
    """Relative to the workspace folder."""
    prefix: str
    suffix: str
    related: tuple[Buffer, ...] = ()
    """Related buffers, reduced to their symbol lines."""
    task: str = ""

    def key(self) -> tuple[str, str, str, str]:
        """What decides the answer (the cache key): the related buffers and the task are
        slow-moving, the text around the cursor is not."""
        return (self.path, self.prefix[-PREFIX_CHARS:], self.suffix, self.task)


def around(text: str, offset: int) -> tuple[str, str]:
    """The text before and after ``offset``, each within its budget (whole lines kept where
    the cut falls)."""
    prefix = text[max(0, offset - PREFIX_CHARS) : offset]
    if offset > PREFIX_CHARS and "\n" in prefix:
        prefix = prefix[prefix.index("\n") + 1 :]
    suffix = text[offset : offset + SUFFIX_CHARS]
    if len(text) - offset > SUFFIX_CHARS and "\n" in suffix:
        suffix = suffix[: suffix.rindex("\n") + 1]
    return prefix, suffix


def related_buffers(
    prefix: str, buffers: Sequence[Buffer], budget: int = RELATED_CHARS
) -> tuple[Buffer, ...]:
    """The open buffers that share the most names with the last lines before the cursor, each
    reduced to its symbol lines (definitions), within ``budget`` characters in all."""
    words = set(_WORD.findall("\n".join(prefix.splitlines()[-40:])))
    if not words:
        return ()
    scored = []
    for buffer in buffers:
        shared = len(words & set(_WORD.findall(buffer.text)))
        if shared:
            scored.append((shared, buffer))
    scored.sort(key=lambda item: -item[0])
    chosen: list[Buffer] = []
    left = budget
    for _, buffer in scored[:RELATED_BUFFERS]:
        symbols = "\n".join(
            line.rstrip() for line in buffer.text.splitlines() if _SYMBOL_LINE.match(line)
        )
        symbols = _clip(symbols, left)
        if symbols:
            chosen.append(Buffer(path=buffer.path, text=symbols))
            left -= len(symbols)
        if left <= 0:
            break
    return tuple(chosen)


def _clip(text: str, budget: int) -> str:
    if len(text) <= budget:
        return text
    cut = text[:budget]
    return cut[: cut.rindex("\n")] if "\n" in cut else cut
