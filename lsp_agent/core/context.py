"""The context epoch: a baseline note built once, and supplemental notes when things change.

The system prompt must open every request with the same bytes — across steps, restarts and
days — or provider prompt caches miss. So what the model needs to know about its
surroundings (folders, platform, date, git, project instructions, skills) is written once,
right before a session's first model call, as the **baseline** of an epoch and stored in the
log (``context_built``). Later, before each model call, the sources are compared with the
snapshot the epoch holds; what changed (the date, an instructions file, the skills list)
becomes a **note**: a user-role message appended to the history (``context_noted``), and the
snapshot moves with it. The system prompt never changes within an epoch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.events import StoredEvent


@attrs.frozen(kw_only=True)
class InstructionSource:
    """One instructions file. ``error`` says why it could not be read (``text`` is then None)."""

    path: str
    text: str | None = None
    error: str | None = None


@attrs.frozen(kw_only=True)
class SourcesSnapshot:
    """What the context sources say right now (the date comes from the core's clock)."""

    workspace_roots: tuple[str, ...]
    platform: str = ""
    git: str = ""
    instructions: tuple[InstructionSource, ...] = ()
    skills: str = ""

    def unreadable(self) -> list[InstructionSource]:
        return [source for source in self.instructions if source.error is not None]


class ContextSources(Protocol):
    async def collect(self, workspace_roots: Sequence[str], *, full: bool) -> SourcesSnapshot:
        """Read the sources; ``full`` also asks git (only needed for a new baseline)."""
        ...


@attrs.frozen(kw_only=True)
class Epoch:
    """What the model was told: the baseline text and the snapshot it now reflects."""

    number: int
    baseline: str
    date: str
    instructions: Mapping[str, str]
    skills: str

    def built(self) -> ev.ContextBuilt:
        """The ``context_built`` event of this epoch."""
        return ev.ContextBuilt(
            epoch=self.number,
            baseline=self.baseline,
            date=self.date,
            instructions=dict(self.instructions),
            skills=self.skills,
        )

    def noted(self, message_id: str, text: str) -> ev.ContextNoted:
        """A ``context_noted`` event: ``text``, and this epoch's snapshot."""
        return ev.ContextNoted(
            message_id=message_id,
            text=text,
            date=self.date,
            instructions=dict(self.instructions),
            skills=self.skills,
        )


def local_date(epoch_seconds: float) -> str:
    return datetime.fromtimestamp(epoch_seconds).strftime("%Y-%m-%d")


def build_baseline(snapshot: SourcesSnapshot, date: str, number: int = 1) -> Epoch:
    lines = ["<environment>"]
    lines += [f"Workspace folder: {root}" for root in snapshot.workspace_roots]
    if snapshot.platform:
        lines.append(f"Platform: {snapshot.platform}")
    lines.append(f"Date at the start of this session: {date}")
    if snapshot.git:
        lines.append(f"Git: {snapshot.git}")
    lines.append("</environment>")
    texts = {s.path: s.text for s in snapshot.instructions if s.text is not None}
    for path, text in texts.items():
        lines += ["", _instructions_block(path, text)]
    if snapshot.skills:
        lines += ["", "<skills>", snapshot.skills, "</skills>"]
    return Epoch(
        number=number,
        baseline="\n".join(lines) + "\n",
        date=date,
        instructions=texts,
        skills=snapshot.skills,
    )


def changes(epoch: Epoch, snapshot: SourcesSnapshot, date: str) -> tuple[str, Epoch] | None:
    """The note telling what changed since ``epoch`` and the epoch after it, or None.

    An instructions file that cannot be read now keeps its last snapshot (stale but kept).
    """
    parts: list[str] = []
    if date != epoch.date:
        parts.append(f"The date is now {date}.")
    readable = {s.path: s.text for s in snapshot.instructions if s.text is not None}
    failing = {s.path for s in snapshot.instructions if s.error is not None}
    instructions = dict(epoch.instructions)
    for path, text in readable.items():
        if instructions.get(path) != text:
            verb = "changed" if path in instructions else "appeared"
            parts.append(
                f"The project instructions in {path} {verb}; they now read:\n"
                + _instructions_block(path, text)
            )
            instructions[path] = text
    for path in list(instructions):
        if path not in readable and path not in failing:
            parts.append(f"The project instructions in {path} were removed; disregard them.")
            del instructions[path]
    if snapshot.skills != epoch.skills:
        listing = snapshot.skills or "(no skills are available any more)"
        parts.append(f"The skills available changed:\n{listing}")
    if not parts:
        return None
    note = "<context-update>\n" + "\n\n".join(parts) + "\n</context-update>"
    updated = attrs.evolve(epoch, date=date, instructions=instructions, skills=snapshot.skills)
    return note, updated


def current_epoch(events: Sequence[StoredEvent]) -> Epoch | None:
    """The epoch the log holds now: the last ``context_built`` with the notes after it."""
    epoch: Epoch | None = None
    for stored in events:
        if stored.type not in ("context_built", "context_noted"):
            continue
        match stored.event:
            case ev.ContextBuilt() as built:
                epoch = Epoch(
                    number=built.epoch,
                    baseline=built.baseline,
                    date=built.date,
                    instructions=dict(built.instructions),
                    skills=built.skills,
                )
            case ev.ContextNoted() as noted if epoch is not None:
                epoch = attrs.evolve(
                    epoch,
                    date=noted.date if noted.date is not None else epoch.date,
                    instructions=(
                        noted.instructions if noted.instructions is not None else epoch.instructions
                    ),
                    skills=noted.skills if noted.skills is not None else epoch.skills,
                )
    return epoch


def _instructions_block(path: str, text: str) -> str:
    return f'<instructions source="{path}">\n{text.rstrip()}\n</instructions>'
