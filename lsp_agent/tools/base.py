"""The shape every tool has: a name, a description, a pydantic ``Params`` model, ``run``.

The registry validates the model's arguments against ``Params`` (whose JSON schema is what
the model sees) and calls ``run`` with a :class:`ToolRunContext`. Tools answer with a
``ToolOutcome``; expected problems (a missing file, a path outside the workspace) are
``is_error=True`` outcomes, never exceptions.
"""

from __future__ import annotations

from importlib import resources
from typing import Protocol, TypeVar

import attrs
from pydantic import BaseModel

from lsp_agent.core.interfaces import Editor
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.tools.boundary import WorkspaceBoundary

__all__ = ["Tool", "ToolRunContext", "load_description"]

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
