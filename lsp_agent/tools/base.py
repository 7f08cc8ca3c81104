"""The shape every tool has: a name, a description, its kind, the permission it asks for and
whether it changes files, a pydantic ``Params`` model, ``describe`` (the call in its own
words) and ``run``.

The registry validates the model's arguments against ``Params`` (whose JSON schema is what
the model sees) and calls ``run`` with a :class:`ToolRunContext`. Tools answer with a
``ToolOutcome``; expected problems (a missing file, a path outside the workspace) are
``is_error=True`` outcomes, never exceptions.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Sequence
from importlib import resources
from typing import Literal, Protocol, TypeVar

import attrs
from pydantic import BaseModel

from lsp_agent.core.interfaces import Editor
from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest, PermissionVerdict, literal
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import PathDetails
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.workspace import protected
from lsp_agent.workspace.boundary import Outside, Resolved, WorkspaceBoundary
from lsp_agent.workspace.path_shapes import meant_path

__all__ = [
    "SearchRoot",
    "Tool",
    "ToolRunContext",
    "display_path",
    "load_description",
    "one_line_title",
    "outside_refusal",
    "refusal",
    "resolve_search_root",
    "shown_path",
]

P = TypeVar("P", bound=BaseModel)


@attrs.frozen(kw_only=True)
class ToolRunContext:
    """Everything a tool may use while it runs."""

    call: ToolCallContext
    """Which session, message and call this is; the workspace roots."""
    boundary: WorkspaceBoundary
    """Every path argument goes through ``boundary.resolve`` before it is touched."""
    editor: Editor
    """The host: open buffers (unsaved text) win over the disk."""
    extra_roots: tuple[str, ...] = ()
    """Folders readable besides the workspace: this session's own spill folder
    (``<data_dir>/tool-output/<session_id>``). Pass to ``boundary.resolve(..., extra_roots=)``
    in tools that only read (``read``, ``grep``)."""

    async def ask(self, request: PermissionRequest) -> PermissionVerdict:
        """The permission gate: configured rules decide, or the user is asked. A write to a
        protected file is always asked of a person (``workspace/protected.py``)."""
        return await self.call.ask(protected.mark_protected(request, self.boundary))

    async def resolve(
        self, path: str, *, kind: Literal["file", "directory"], spill: bool = False
    ) -> Resolved | ToolOutcome:
        """Where ``path`` really is, or the refusal the model reads.

        Inside a workspace folder (or, with ``spill``, this session's spill folder): the
        resolved path. Outside: an ``external_directory`` ask for the folder (the target
        itself for a directory, else its parent); approved → the outside path, refused →
        an error outcome naming the boundary. Nothing outside is touched before that.
        """
        path = meant_path(path, self.boundary.roots)
        where = self.boundary.resolve(path, extra_roots=self.extra_roots if spill else ())
        if isinstance(where, Resolved):
            return where
        if where.hidden:  # the agent's own data folder: never asked, never touched
            return outside_refusal(where, PermissionVerdict(allowed=False))
        folder = where.resolved if kind == "directory" else os.path.dirname(where.resolved)
        verdict = await self.ask(
            PermissionRequest(
                permission=PermissionKind.EXTERNAL_DIRECTORY,
                patterns=(where.resolved,),
                always=(literal(where.resolved),),  # this file or folder, never what is below
                title=f"Access {where.resolved}, outside the workspace",
                description=where.message,
            )
        )
        if verdict.allowed:
            return Resolved(path=where.resolved, root=folder, display=where.resolved)
        return outside_refusal(where, verdict)


def outside_refusal(where: Outside, verdict: PermissionVerdict) -> ToolOutcome:
    return ToolOutcome(
        output=f"{where.message}\n{verdict.message}".strip(),
        is_error=True,
        title=where.path,
        details=PathDetails(path=where.resolved, outside=True),
        stop_turn=verdict.stop_turn,
    )


def refusal(verdict: PermissionVerdict, *, title: str | None = None) -> ToolOutcome:
    """The outcome of a call the gate did not allow."""
    return ToolOutcome(
        output=verdict.message, is_error=True, title=title, stop_turn=verdict.stop_turn
    )


# --- search roots (grep, glob, list): checked like any path, spill folder for grep only --


@attrs.frozen(kw_only=True)
class SearchRoot:
    """A checked search root: a folder, or (for ``grep``) a single file."""

    path: str
    display: str
    is_dir: bool

    @property
    def folder(self) -> str:
        """Where rg runs and what globs are relative to."""
        return self.path if self.is_dir else os.path.dirname(self.path)


async def resolve_search_root(
    ctx: ToolRunContext,
    path: str | None,
    *,
    permission: PermissionKind,
    title: str,
    files_too: bool,
    extra: bool = False,
) -> SearchRoot | ToolOutcome:
    """The folder (or, with ``files_too``, file) to search, or the error outcome.

    ``extra`` also admits the session's spill folder (``ctx.extra_roots``).
    """
    where = await ctx.resolve(path or ".", kind="directory", spill=extra)
    if isinstance(where, ToolOutcome):
        return where
    verdict = await ctx.ask(
        PermissionRequest(permission=permission, patterns=(where.display,), title=title)
    )
    if not verdict.allowed:
        return refusal(verdict, title=title)
    try:
        mode = (await asyncio.to_thread(os.stat, where.path)).st_mode
    except OSError:
        return _root_error(f"No such file or directory: {where.path}", where, title)
    if stat.S_ISDIR(mode) or (files_too and stat.S_ISREG(mode)):
        return SearchRoot(path=where.path, display=where.display, is_dir=stat.S_ISDIR(mode))
    return _root_error(f"Not a directory: {where.path}", where, title)


def _root_error(message: str, where: Resolved, title: str) -> ToolOutcome:
    return ToolOutcome(
        output=message, is_error=True, title=title, details=PathDetails(path=where.path)
    )


def display_path(path: str, ctx: ToolRunContext) -> str:
    """Relative to the first workspace folder when inside it (what relative paths resolve
    against), absolute otherwise; undecodable bytes shown as U+FFFD."""
    first = ctx.boundary.roots[0]
    if path.startswith(first.rstrip("/") + "/"):
        path = path[len(first.rstrip("/")) + 1 :]
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def shown_path(path: str, roots: Sequence[str]) -> str:
    """``path`` as a call's title shows it: relative to the first workspace folder when it
    is written inside it, else as written (``describe`` has not resolved anything yet)."""
    if roots:
        first = roots[0].rstrip("/") + "/"
        if path.startswith(first):
            return path[len(first) :] or "."
    return path


def one_line_title(text: str, limit: int = 120) -> str:
    """``text`` on one line, cut to ``limit`` characters (``…`` marks a cut)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class Tool(Protocol[P]):
    """One tool. Implementations are small classes, one module each."""

    @property
    def name(self) -> str:
        """The name the model calls, e.g. ``read``."""
        ...

    @property
    def description(self) -> str:
        """What the model reads about the tool (``descriptions/<name>.md``)."""
        ...

    @property
    def kind(self) -> ToolKind:
        """What the tool does, as the editor shows its calls: read, edit, execute, fetch,
        search, think or other."""
        ...

    @property
    def permission(self) -> PermissionKind:
        """What its asks ask for, what the rules and a mode's limits match, what hides it
        (docs/permissions.md): ``read`` for a tool that only reads, ``edit`` for one that
        changes files… A path outside the workspace asks ``external_directory`` besides."""
        ...

    @property
    def mutates(self) -> bool:
        """Whether a call may change files: a step that calls it is snapshotted (an undo
        point). True for anything that can write, a shell command included."""
        ...

    @property
    def Params(self) -> type[P]:
        """The argument model; ``extra="forbid"`` and a description on every field."""
        ...

    def describe(self, params: P, roots: Sequence[str]) -> str:
        """The call in the tool's own plain words, e.g. "Run python3 hello.py", "Edit
        src/app.py" (``roots``: the workspace folders, for :func:`shown_path`): the title
        every update of the call carries from ``pending`` on, so an editor shows what runs
        without knowing the tool's arguments."""
        ...

    async def run(self, params: P, ctx: ToolRunContext) -> ToolOutcome:
        """Do the work. ``params`` is an instance of ``Params``."""
        ...


def load_description(name: str) -> str:
    """The packaged ``tools/descriptions/<name>.md``, without trailing whitespace."""
    path = resources.files("lsp_agent.tools").joinpath("descriptions", f"{name}.md")
    return path.read_text(encoding="utf-8").rstrip()
