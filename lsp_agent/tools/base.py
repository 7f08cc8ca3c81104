"""The shape every tool has: a name, a description, a pydantic ``Params`` model, ``run``.

The registry validates the model's arguments against ``Params`` (whose JSON schema is what
the model sees) and calls ``run`` with a :class:`ToolRunContext`. Tools answer with a
``ToolOutcome``; expected problems (a missing file, a path outside the workspace) are
``is_error=True`` outcomes, never exceptions.
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Literal, Protocol, TypeVar

import attrs
from pydantic import BaseModel

from lsp_agent.core.interfaces import Editor
from lsp_agent.core.permission import PermissionRequest, PermissionVerdict
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.tools.boundary import Outside, Resolved, WorkspaceBoundary

__all__ = ["Tool", "ToolRunContext", "load_description", "outside_refusal", "refusal"]

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
        """The permission gate: configured rules decide, or the user is asked."""
        return await self.call.ask(request)

    async def resolve(
        self, path: str, *, kind: Literal["file", "directory"], spill: bool = False
    ) -> Resolved | ToolOutcome:
        """Where ``path`` really is, or the refusal the model reads.

        Inside a workspace folder (or, with ``spill``, this session's spill folder): the
        resolved path. Outside: an ``external_directory`` ask for the folder (the target
        itself for a directory, else its parent); approved → the outside path, refused →
        an error outcome naming the boundary. Nothing outside is touched before that.
        """
        where = self.boundary.resolve(path, extra_roots=self.extra_roots if spill else ())
        if isinstance(where, Resolved):
            return where
        if where.hidden:  # the agent's own data folder: never asked, never touched
            return outside_refusal(where, PermissionVerdict(allowed=False))
        folder = where.resolved if kind == "directory" else os.path.dirname(where.resolved)
        verdict = await self.ask(
            PermissionRequest(
                permission="external_directory",
                patterns=(where.resolved,),
                always=(f"{folder.rstrip('/')}/*",),
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
        metadata={"path": where.resolved, "outside": True},
        stop_turn=verdict.stop_turn,
    )


def refusal(verdict: PermissionVerdict, *, title: str | None = None) -> ToolOutcome:
    """The outcome of a call the gate did not allow."""
    return ToolOutcome(
        output=verdict.message, is_error=True, title=title, stop_turn=verdict.stop_turn
    )


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
    def Params(self) -> type[P]:
        """The argument model; ``extra="forbid"`` and a description on every field."""
        ...

    async def run(self, params: P, ctx: ToolRunContext) -> ToolOutcome:
        """Do the work. ``params`` is an instance of ``Params``."""
        ...


def load_description(name: str) -> str:
    """The packaged ``tools/descriptions/<name>.md``, without trailing whitespace."""
    path = resources.files("lsp_agent.tools").joinpath("descriptions", f"{name}.md")
    return path.read_text(encoding="utf-8").rstrip()
