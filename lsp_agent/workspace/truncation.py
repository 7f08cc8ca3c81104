"""Central tool-output truncation: a head + tail preview of an output that is too large.

Every tool's outcome passes through :func:`limit_output` in the registry. An output within
both limits (lines and UTF-8 bytes) is returned untouched. A larger one is saved whole (the
caller's ``save``, normally a spill file) and the model gets the first lines, a marker naming
the omitted part and where the whole output is, and the last lines. The preview is cut at line
boundaries when it can be, never inside a UTF-8 character, and stays within both limits,
marker included.

Lines are counted as the ``read`` tool counts them: split on ``\\n``; a final newline ends the
last line rather than starting an empty one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import attrs

from lsp_agent.core.tool_details import Spill
from lsp_agent.core.tooling import ToolOutcome

__all__ = [
    "Omission",
    "OutputLimits",
    "count_lines",
    "limit_output",
    "limit_output_sync",
    "lost_marker",
    "preview",
    "spill_marker",
]

_log = logging.getLogger(__name__)

HEAD_SHARE = (3, 5)
"""The head gets up to 60% of ``max_bytes``…"""
TAIL_SHARE = (1, 5)
"""…and the tail up to 20%; the marker and the separators come out of the rest."""
_SEPARATOR = "\n\n"
# Outputs up to this many characters are measured on the event loop (at most 4 bytes each).
_INLINE_CHARS = 64 * 1024


def _positive(_instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        raise ValueError(f"{attribute.name} must be at least 1, not {value}")


@attrs.frozen(kw_only=True)
class OutputLimits:
    """How much of one tool output the model sees (config ``tool_output``)."""

    max_lines: int = attrs.field(default=2000, validator=_positive)
    max_bytes: int = attrs.field(default=51_200, validator=_positive)


@attrs.frozen(kw_only=True)
class Omission:
    """What a preview leaves out; the marker describes it."""

    lines: int
    """Lines not shown in full (a line cut in the middle counts as omitted)."""
    bytes: int
    """UTF-8 bytes not shown."""
    first_line: int
    """1-based number of the first line not shown in full."""
    last_line: int
    """1-based number of the last line not shown in full."""
    total_lines: int
    total_bytes: int


Marker = Callable[[Omission], str]
"""Writes the marker line for an omission. Its length must not grow when the numbers shrink
(the preview reserves room for the marker of the largest possible omission)."""


def _span(o: Omission) -> str:
    lines = "line" if o.lines == 1 else "lines"
    size = "byte" if o.bytes == 1 else "bytes"
    return (
        f"… {o.lines} {lines} ({o.bytes} {size}) omitted "
        f"(lines {o.first_line}-{o.last_line} of {o.total_lines})"
    )


def spill_marker(path: Path | str) -> Marker:
    """The marker when the whole output was saved to ``path``."""

    def marker(o: Omission) -> str:
        return (
            f"{_span(o)}; the full output is in {path}. "
            "Use read with offset/limit, or grep, on that file to see the rest."
        )

    return marker


def lost_marker(reason: str) -> Marker:
    """The marker when the whole output could not be saved."""

    def marker(o: Omission) -> str:
        return f"{_span(o)}; the full output could not be saved ({reason})."

    return marker


def count_lines(data: bytes) -> int:
    """Lines in ``data``: newlines, plus one for a last line without a newline."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def preview(data: bytes, limits: OutputLimits, marker: Marker) -> str:
    """Head + marker + tail of ``data`` (UTF-8), within ``limits`` marker included.

    ``data`` should exceed a limit; the preview never overlaps itself either way. If the
    limits are too small to hold even the marker, the marker alone is returned.
    """
    total_lines = count_lines(data)
    total_bytes = len(data)
    largest = marker(
        Omission(
            lines=total_lines,
            bytes=total_bytes,
            first_line=total_lines,
            last_line=total_lines,
            total_lines=total_lines,
            total_bytes=total_bytes,
        )
    )
    reserved_bytes = len(largest.encode("utf-8")) + 2 * len(_SEPARATOR)
    reserved_lines = largest.count("\n") + 1 + 2  # the marker and a blank line either side
    spare_bytes = limits.max_bytes - reserved_bytes
    spare_lines = limits.max_lines - reserved_lines
    if spare_bytes <= 0 or spare_lines <= 0:
        everything = Omission(
            lines=total_lines,
            bytes=total_bytes,
            first_line=1,
            last_line=total_lines,
            total_lines=total_lines,
            total_bytes=total_bytes,
        )
        return marker(everything)

    # When the marker leaves less than the shares, the rest is split 3:1 all the same.
    head_share = limits.max_bytes * HEAD_SHARE[0] // HEAD_SHARE[1]
    head_bytes = min(head_share, spare_bytes * 3 // 4)
    tail_bytes = min(limits.max_bytes * TAIL_SHARE[0] // TAIL_SHARE[1], spare_bytes - head_bytes)
    head_lines = (spare_lines * 3 + 3) // 4
    tail_lines = spare_lines - head_lines

    head_end, head_whole = _head(data, head_bytes, head_lines)
    tail_start, tail_whole = _tail(data, tail_bytes, tail_lines, floor=head_end)

    omitted_lines = total_lines - head_whole - tail_whole
    text = marker(
        Omission(
            lines=omitted_lines,
            bytes=tail_start - head_end,
            first_line=head_whole + 1,
            last_line=total_lines - tail_whole,
            total_lines=total_lines,
            total_bytes=total_bytes,
        )
    )
    parts: list[str] = []
    head = data[:head_end].removesuffix(b"\n")
    if head_end:
        parts.append(head.decode("utf-8", errors="replace"))
    parts.append(text)
    if tail_start < total_bytes:
        parts.append(data[tail_start:].decode("utf-8", errors="replace"))
    return _SEPARATOR.join(parts)


def _head(data: bytes, budget: int, max_lines: int) -> tuple[int, int]:
    """Where the head ends, and how many whole lines it holds.

    Whole lines while both budgets last; if that leaves more than half the byte budget
    unused because the next line is too long, that line is cut (on a character boundary)
    and shown in part.
    """
    end = 0
    whole = 0
    while whole < max_lines:
        # budget + 1: the head's last newline is not shown (a separator takes its place).
        newline = data.find(b"\n", end, budget + 1)
        if newline == -1:
            break
        end = newline + 1
        whole += 1
    if whole < max_lines and end < len(data) and end * 2 < budget:
        end = _char_start(data, min(budget, len(data)), end)
        if end == len(data):  # the last line fitted after all
            whole += 1
    return end, whole


def _tail(data: bytes, budget: int, max_lines: int, *, floor: int) -> tuple[int, int]:
    """Where the tail starts (never before ``floor``), and how many whole lines it holds."""
    size = len(data)
    lowest = max(size - budget, floor)
    search_end = size - 1 if data.endswith(b"\n") else size
    start = size
    whole = 0
    while whole < max_lines:
        newline = data.rfind(b"\n", max(lowest - 1, 0), search_end)
        if newline == -1:
            break
        start = newline + 1
        search_end = newline
        whole += 1
    if whole < max_lines and start > lowest and (size - start) * 2 < budget:
        start = _char_end(data, lowest, start)
        if start == 0 or data[start - 1] == 0x0A:  # the cut fell on a line start
            whole += 1
    return start, whole


def _char_start(data: bytes, cut: int, lowest: int) -> int:
    """``cut`` moved back (not below ``lowest``) until it does not split a character."""
    while cut > lowest and cut < len(data) and data[cut] & 0xC0 == 0x80:
        cut -= 1
    return cut


def _char_end(data: bytes, cut: int, highest: int) -> int:
    """``cut`` moved forward (not past ``highest``) until it does not split a character."""
    while cut < highest and data[cut] & 0xC0 == 0x80:
        cut += 1
    return cut


# --- outcomes ---------------------------------------------------------------------------


Save = Callable[[bytes], Path]
"""Saves the whole output (UTF-8) and answers where; raises ``OSError`` when it cannot."""


def limit_output_sync(outcome: ToolOutcome, limits: OutputLimits, save: Save) -> ToolOutcome:
    """``outcome`` itself when within ``limits``; otherwise saved whole and previewed."""
    data = outcome.output.encode("utf-8", errors="replace")
    total_lines = count_lines(data)
    if total_lines <= limits.max_lines and len(data) <= limits.max_bytes:
        return outcome
    spill_path: str | None
    reason: str | None = None
    try:
        spill_path = str(save(data))
    except OSError as exc:
        _log.warning("could not save a large tool output: %s", exc)
        reason = f"{type(exc).__name__}: {exc.strerror or exc}"
        spill_path = None
        marker = lost_marker(reason)
    else:
        marker = spill_marker(spill_path)
    spill = Spill(path=spill_path, total_lines=total_lines, total_bytes=len(data), error=reason)
    return attrs.evolve(outcome, output=preview(data, limits, marker), spill=spill)


async def limit_output(outcome: ToolOutcome, limits: OutputLimits, save: Save) -> ToolOutcome:
    """:func:`limit_output_sync`, off the event loop unless the output is small."""
    text = outcome.output
    if len(text) <= _INLINE_CHARS and _fits(text, limits):
        return outcome
    return await asyncio.to_thread(limit_output_sync, outcome, limits, save)


def _fits(text: str, limits: OutputLimits) -> bool:
    if len(text) > limits.max_bytes:  # every character is at least one byte
        return False
    if text.count("\n") + (1 if text and not text.endswith("\n") else 0) > limits.max_lines:
        return False
    return len(text.encode("utf-8", errors="replace")) <= limits.max_bytes
