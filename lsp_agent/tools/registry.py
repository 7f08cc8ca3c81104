"""The tool registry: the only list of tools, and the core's ``ToolExecutor``.

It turns each tool into the :class:`ToolSpec` the core reads (``Params`` as the schema the model
sees; the tool's kind and whether it changes files, which only the turn uses), validates the
model's arguments, and runs the tool. Every failure comes back as an error ``ToolOutcome`` the model
reads (the turn goes on); only cancellation propagates. Every outcome, errors included, then
passes the central output limit: one too large is saved whole to a spill file in the session's
spill folder and the model gets a head + tail preview naming that file (``truncation.py``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs
from pydantic import BaseModel, ValidationError

from lsp_agent.core.errors import validation_text
from lsp_agent.core.interfaces import Editor
from lsp_agent.core.messages import ToolCallPart, ToolSpec
from lsp_agent.core.secrets.filter import NO_SECRETS, SecretFilter
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.sandbox import CommandSandbox
from lsp_agent.search.editor_queries import EditorQueries
from lsp_agent.shell.runner import CommandRunner
from lsp_agent.skills.catalog import SkillCatalog
from lsp_agent.tools.apply_patch import ApplyPatchTool
from lsp_agent.tools.base import Tool, ToolRunContext
from lsp_agent.tools.bash import BashTool
from lsp_agent.tools.code_nav import code_nav_tools
from lsp_agent.tools.diagnostics import DiagnosticsTool
from lsp_agent.tools.edit import EditTool
from lsp_agent.tools.glob import GlobTool
from lsp_agent.tools.grep import GrepTool
from lsp_agent.tools.list import ListTool
from lsp_agent.tools.question import QuestionTool
from lsp_agent.tools.read import ReadTool
from lsp_agent.tools.skill import SkillTool
from lsp_agent.tools.task import TaskTool
from lsp_agent.tools.todowrite import TodoWriteTool
from lsp_agent.tools.webfetch import WebfetchTool
from lsp_agent.tools.write import WriteTool
from lsp_agent.workspace.boundary import WorkspaceBoundary
from lsp_agent.workspace.files import FileLocks
from lsp_agent.workspace.spill import session_spill_dir, write_spill
from lsp_agent.workspace.truncation import OutputLimits, limit_output

__all__ = [
    "BoundaryFactory",
    "ToolRegistry",
    "ToolSource",
    "boundary_from_context",
    "default_registry",
    "tool_schema",
]

_log = logging.getLogger(__name__)
_FILTER_INLINE_CHARS = 64 * 1024

BoundaryFactory = Callable[[ToolCallContext], WorkspaceBoundary]


class ToolSource(Protocol):
    """Tools that come and go while the agent runs (MCP servers, ``lsp_agent/mcp``).

    ``specs`` returns the same tuple object while its tools are unchanged; ``call`` answers
    None for a name it does not offer. Its outcomes pass the same filter and limit."""

    def specs(self) -> tuple[ToolSpec, ...]: ...

    async def call(
        self, name: str, arguments: Mapping[str, Any], ctx: ToolCallContext
    ) -> ToolOutcome | None: ...


def boundary_from_context(ctx: ToolCallContext) -> WorkspaceBoundary:
    """The default: the call's own workspace roots."""
    return WorkspaceBoundary(ctx.workspace_roots)


def default_registry(
    editor: Editor,
    *,
    limits: OutputLimits,
    spill_root: Path,
    secrets: SecretFilter = NO_SECRETS,
    hidden_env: Collection[str] = (),
    allow_hosts: Sequence[str] = (),
    skills: SkillCatalog | None = None,
    editor_diagnostics: bool = False,
    sandbox: CommandSandbox | None = None,
    command_runner: CommandRunner | None = None,
    editor_queries: EditorQueries | None = None,
    extra_tools: Sequence[Tool[Any]] = (),
) -> ToolRegistry:
    """Every built-in tool, then ``extra_tools``. Adding a built-in tool is its module in
    ``tools/`` and one line here (docs/tools.md "Adding a tool"); ``extra_tools`` offers
    tools defined outside this package (an embedder's, a test's) the same way.

    ``hidden_env`` names the variables ``bash`` commands never see (the agent's own keys);
    ``allow_hosts`` admits named hosts to ``webfetch`` even on private addresses;
    ``editor_diagnostics`` offers the ``diagnostics`` tool (only an editor has them);
    ``sandbox`` confines ``bash`` commands (default: off); ``command_runner`` hosts them
    (default: spawned here; an ACP client's terminal); ``editor_queries`` answers the
    code-navigation tools (``definition``, ``references``…: those whose kinds it answers).
    """
    locks = FileLocks()  # one per registry: edits to one file never interleave
    return ToolRegistry(
        [
            ReadTool(),
            ListTool(),
            GlobTool(),
            GrepTool(),
            *([DiagnosticsTool()] if editor_diagnostics else []),
            *code_nav_tools(editor_queries),
            WriteTool(locks),
            EditTool(locks),
            ApplyPatchTool(locks),
            BashTool(hidden_env=hidden_env, sandbox=sandbox, runner=command_runner),
            WebfetchTool(allow_hosts=allow_hosts),
            TodoWriteTool(),
            QuestionTool(),
            SkillTool(skills or SkillCatalog()),
            TaskTool(),
            *extra_tools,
        ],
        editor=editor,
        limits=limits,
        spill_root=spill_root,
        secrets=secrets,
    )


class ToolRegistry:
    """Schemas out, calls in, outcomes as values.

    ``limits`` caps what the model sees of one output; ``spill_root`` (``<data_dir>/tool-output``)
    holds one folder per session with the whole outputs, which that session's tools may read.
    """

    def __init__(
        self,
        tools: Sequence[Tool[Any]],
        *,
        editor: Editor,
        limits: OutputLimits,
        spill_root: Path,
        secrets: SecretFilter = NO_SECRETS,
        boundary_factory: BoundaryFactory = boundary_from_context,
    ) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self._editor = editor
        self._limits = limits
        self._spill_root = spill_root
        self._secrets = secrets
        self._boundary_factory = boundary_factory
        # Built once, so the tool block of every request is byte-identical (prompt caching).
        self._specs = tuple(
            ToolSpec(
                name=t.name,
                description=t.description,
                input_schema=tool_schema(t.Params),
                kind=t.kind,
                mutates=t.mutates,
                permission=t.permission,
                describe=functools.partial(self._describe, t),
            )
            for t in tools
        )
        self._sources: list[ToolSource] = []
        self._combined: tuple[tuple[ToolSpec, ...], ...] = ()
        self._all_specs = self._specs

    def _describe(
        self, tool: Tool[Any], arguments: Mapping[str, Any], roots: Sequence[str]
    ) -> str | None:
        """``tool``'s title for a call with ``arguments`` (secrets masked), or None when they
        do not fit its ``Params``."""
        try:
            params = tool.Params.model_validate(arguments)
        except ValidationError:
            return None
        try:
            title = tool.describe(params, roots)
        except Exception:  # a title is never worth a failed turn
            _log.exception("tool %s could not describe a call", tool.name)
            return None
        return self._secrets.redact(title) if title else None

    def add_source(self, source: ToolSource) -> None:
        """Offer ``source``'s tools after the built-in ones (their names never collide)."""
        self._sources.append(source)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def tool(self, name: str) -> Tool[Any] | None:
        """The built-in tool ``name``, for a caller that runs it another way (``bash``'s
        typed commands, ``run --until``)."""
        return self._tools.get(name)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The built-in tools, then the sources'; a new tuple only when a source changed."""
        current = tuple(source.specs() for source in self._sources)
        if len(current) != len(self._combined) or any(
            a is not b for a, b in zip(current, self._combined, strict=True)
        ):
            self._combined = current
            extra = [spec for specs in current for spec in specs if spec.name not in self._tools]
            self._all_specs = (*self._specs, *extra)
        return self._all_specs

    @property
    def limits(self) -> OutputLimits:
        return self._limits

    def spill_dir(self, session_id: str) -> Path:
        """``session_id``'s spill folder (it may not exist yet)."""
        return session_spill_dir(self._spill_root, session_id)

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        outcome = await self._run(call, ctx)
        if len(outcome.output) > _FILTER_INLINE_CHARS:  # ~40 ms per MB: off the event loop
            outcome = await asyncio.to_thread(self._redacted, outcome)
        else:
            outcome = self._redacted(outcome)
        save = functools.partial(write_spill, self._spill_root, ctx.session_id, ctx.tool_call_id)
        return await limit_output(outcome, self._limits, save)

    def _redacted(self, outcome: ToolOutcome) -> ToolOutcome:
        """Secrets leave no tool: filtered before the model, the log or a spill file; the
        model is told what was masked, so it does not take a mask for the file's content."""
        output = self._secrets.mask(outcome.output).with_note()
        title = self._secrets.redact(outcome.title) if outcome.title else outcome.title
        if output == outcome.output and title == outcome.title:
            return outcome
        return attrs.evolve(outcome, output=output, title=title)

    async def _run(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        tool = self._tools.get(call.name)
        if tool is None:
            for source in self._sources:
                try:
                    outcome = await source.call(call.name, call.input, ctx)
                except Exception as exc:  # CancelledError is a BaseException: it propagates.
                    _log.exception("tool %s failed (call %s)", call.name, ctx.tool_call_id)
                    return _error(f"The {call.name} tool failed: {type(exc).__name__}: {exc}")
                if outcome is not None:
                    return outcome
            available = ", ".join(spec.name for spec in self.specs()) or "none"
            return _error(f"Unknown tool: {call.name}. Available tools: {available}.")
        try:
            params = tool.Params.model_validate(call.input)
        except ValidationError as exc:
            problems = validation_text(exc.errors(include_url=False))
            return _error(
                f"The {tool.name} tool was called with invalid arguments: {problems}. "
                "Please rewrite the input so it satisfies the expected schema."
            )
        try:
            run_ctx = ToolRunContext(
                call=ctx,
                boundary=self._boundary_factory(ctx),
                editor=self._editor,
                extra_roots=(str(self.spill_dir(ctx.session_id)),),
            )
            return await tool.run(params, run_ctx)
        except Exception as exc:  # CancelledError is a BaseException: it propagates.
            _log.exception("tool %s failed (call %s)", tool.name, ctx.tool_call_id)
            return _error(f"The {tool.name} tool failed: {type(exc).__name__}: {exc}")


def _error(output: str) -> ToolOutcome:
    return ToolOutcome(output=output, is_error=True)


# --- schemas ----------------------------------------------------------------------------

_SCHEMA_MAPS = frozenset({"properties", "patternProperties"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_VALUES = frozenset({"items", "additionalProperties", "not"})


def tool_schema(params: type[BaseModel]) -> dict[str, Any]:
    """``params``' JSON schema, made small: no titles, references inlined, ``X | None = None``
    shown as plain ``X`` (the argument may simply be left out). Recursive models are refused:
    providers and OpenAI-compatible servers differ too much in what they do with them.
    """
    schema = params.model_json_schema()
    defs = schema.pop("$defs", {})
    return _clean(schema, defs, ())


def _clean(
    node: Mapping[str, Any], defs: Mapping[str, Any], seen: tuple[str, ...]
) -> dict[str, Any]:
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in seen:
            raise ValueError(f"recursive tool parameter model {name!r} is not supported")
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return {**_clean(defs[name], defs, (*seen, name)), **_clean(siblings, defs, seen)}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in _SCHEMA_MAPS:
            out[key] = {name: _clean(sub, defs, seen) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS:
            out[key] = [_clean(sub, defs, seen) for sub in value]
        elif key in _SCHEMA_VALUES and isinstance(value, Mapping):
            out[key] = _clean(value, defs, seen)
        else:
            out[key] = value
    return _simplify(out)


def _simplify(node: dict[str, Any]) -> dict[str, Any]:
    variants = node.get("allOf")
    if isinstance(variants, list) and len(variants) == 1:
        rest = {k: v for k, v in node.items() if k != "allOf"}
        return {**variants[0], **rest}
    variants = node.get("anyOf")
    if "default" in node and node["default"] is None and isinstance(variants, list):
        kept = [v for v in variants if v != {"type": "null"}]
        if len(kept) == 1 and len(variants) == 2:
            rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
            return {**kept[0], **rest}
    return node
