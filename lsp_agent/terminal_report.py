"""What the terminal prints about work already done: the files a ``run`` changed, and a
tool's output under its line in ``sessions show``.

Everything from a file name, the model or a tool goes through :mod:`lsp_agent.display`
(control characters escaped), like the rest of the CLI's output.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsp_agent.core.checkpoints import SnapshotChange
from lsp_agent.display import block, one_line

__all__ = ["OUTPUT_LINES", "changed_files", "output_tail"]

OUTPUT_LINES = 10
"""How many of a tool output's last lines ``sessions show`` prints (``run`` shows as many)."""
_LINE_CHARS = 240
_STATUS = {"add": " (new)", "delete": " (deleted)"}


def changed_files(changes: Sequence[SnapshotChange]) -> list[str]:
    """``2 files changed (+4 -1):`` and one line per file, as ``git diff --stat`` would say
    it; nothing when nothing changed."""
    if not changes:
        return []
    added = sum(c.additions for c in changes)
    deleted = sum(c.deletions for c in changes)
    files = f"{len(changes)} file{'' if len(changes) == 1 else 's'}"
    lines = [f"{files} changed (+{added} -{deleted}):"]
    width = max(len(one_line(c.path)) for c in changes)
    for c in changes:
        name = one_line(c.path).ljust(width)
        lines.append(f"  {name}  +{c.additions} -{c.deletions}{_STATUS.get(c.status, '')}")
    return lines


def output_tail(output: str, indent: str, *, more: str = "") -> list[str]:
    """The last :data:`OUTPUT_LINES` lines of ``output``, each indented and cut at 240
    characters, after a line counting the ones left out (``more`` is added to it: where to
    read them all)."""
    lines = output.rstrip("\n").split("\n")  # not splitlines(): a \r is shown, not split on
    if lines == [""]:
        return []
    shown = lines[-OUTPUT_LINES:]
    head = []
    if len(lines) > len(shown):
        left = len(lines) - len(shown)
        head = [f"{indent}… {left} earlier line{'' if left == 1 else 's'}{more}"]
    tail = []
    for raw in shown:
        text = block(raw.expandtabs(4).rstrip())
        if len(text) > _LINE_CHARS:
            text = text[:_LINE_CHARS] + "…"
        tail.append(f"{indent}{text}".rstrip())
    return head + tail
