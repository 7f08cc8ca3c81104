"""The modes a session runs in, in one table: what a client may choose, and the subagents.

A mode names its system prompt, its rules and the ``agents.<name>`` entry that configures its
model (:data:`AGENT_NAMES` is derived from this table and the side requests). The rules are
*limits* (permission.py): they only make a decision stricter, and they name permissions
(:class:`PermissionKind`), never a tool: a tool is governed by the permission it declares.
``build`` and ``plan`` are a client's choice (``run --mode``, ``agent/session/new``,
``setConfigOption``, the ``mode`` setting; a client learns them, with their titles and
descriptions, from the session's ``mode`` config option); ``general`` and ``explore`` are the
subagents the ``task`` tool starts. ``explore`` is read-only by an *allow-list*: every
permission but the reading ones is denied, so a new tool, or any MCP tool, is denied there
unless it declares a reading permission. An unknown mode denies everything.

A subagent is never looser than its parent: it inherits every limit its parent runs under,
and a parent whose mode names ``subagents_as`` (``plan``) runs every child as that subagent
(read-only ``explore``) with its asks made in the parent's mode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from lsp_agent.core.errors import InvalidConfigValue
from lsp_agent.core.permission.rules import Action, Rule
from lsp_agent.core.permission_kinds import PermissionKind


@attrs.frozen(kw_only=True)
class Mode:
    name: str
    title: str
    description: str
    prompt: str
    """The system prompt's name (a key of ``core.prompts.SECTIONS``)."""
    agent: str
    """The ``agents.<name>`` entry that configures its model (a subagent's: ``task``)."""
    rules: tuple[Rule, ...] = ()
    """Limits on the configured rules, added to every call's rule set."""
    subagent: bool = False
    """Started by the ``task`` tool; a client cannot choose it."""
    subagents_as: str | None = None
    """The subagent every child of a session in this mode runs as, whatever was asked for."""
    yes_approves: bool = True
    """``--yes`` may approve an ask raised in this mode (plan's asks are its point: never)."""


def _limits(source: str, actions: Mapping[PermissionKind, Action]) -> tuple[Rule, ...]:
    return tuple(
        Rule(permission=permission, pattern="*", action=action, source=source, limit=True)
        for permission, action in actions.items()
    )


def _only(source: str, allowed: Sequence[PermissionKind]) -> tuple[Rule, ...]:
    """An allow-list: one limit denying every permission but ``allowed``."""
    rule = Rule(
        permission="*",
        pattern="*",
        action="deny",
        source=source,
        limit=True,
        sparing=tuple(allowed),
    )
    return (rule,)


EXPLORE_ALLOWS: tuple[PermissionKind, ...] = (
    PermissionKind.READ,
    PermissionKind.LIST,
    PermissionKind.GLOB,
    PermissionKind.GREP,
    PermissionKind.DIAGNOSTICS,
    PermissionKind.EXTERNAL_DIRECTORY,
)
"""What the read-only ``explore`` subagent may do (still as the rules say): look around."""

MODES: Mapping[str, Mode] = {
    mode.name: mode
    for mode in (
        Mode(
            name="build",
            title="Build",
            description="Works on the code: reads, edits files and runs commands.",
            prompt="build",
            agent="build",
        ),
        Mode(
            name="plan",
            title="Plan",
            description="Investigates and proposes a plan; no file edits, every command asked.",
            prompt="plan",
            agent="plan",
            rules=_limits(
                "plan mode",
                {
                    PermissionKind.EDIT: "deny",
                    PermissionKind.BASH: "ask",
                    PermissionKind.MCP: "ask",
                },
            ),
            subagents_as="explore",
            yes_approves=False,
        ),
        Mode(
            name="general",
            title="General",
            description="A subagent: what its parent may do, but no further subagents and "
            "no plan of its own.",
            prompt="general",
            agent="task",
            rules=_limits(
                "general subagent",
                dict.fromkeys((PermissionKind.TASK, PermissionKind.TODOWRITE), "deny"),
            ),
            subagent=True,
        ),
        Mode(
            name="explore",
            title="Explore",
            description="A read-only subagent: it may look around, nothing else.",
            prompt="explore",
            agent="task",
            rules=_only("explore subagent (read-only)", EXPLORE_ALLOWS),
            subagent=True,
        ),
    )
}

DEFAULT_MODE = "build"
CLIENT_MODES = tuple(name for name, mode in MODES.items() if not mode.subagent)
"""The modes a client may choose, in the order it lists them."""
SUBAGENTS = tuple(name for name, mode in MODES.items() if mode.subagent)

SIDE_AGENTS = ("title", "summary", "completion", "commit")
"""The side requests besides the turns (a title, a compaction summary, the editor's inline
completions and next-edit suggestions) and the commit message (``core/commit_message.py``):
agents with a model of their own (``small_model`` is their fallback), but no mode."""

AGENT_NAMES = tuple(dict.fromkeys([*(mode.agent for mode in MODES.values()), *SIDE_AGENTS]))
"""Every ``agents.<name>`` the configuration may set: the modes' agents, then the side
requests (``build``, ``plan``, ``task``, ``title``, ``summary``, ``completion``, ``commit``)."""


def agent_of(mode: str) -> str:
    """The ``agents`` entry a turn in ``mode`` reads (a subagent's is ``task``; an unknown
    mode's, its own name: nothing is configured for it)."""
    found = MODES.get(mode)
    return found.agent if found is not None else mode


def mode_rules(mode: str, read_only_mcp: Sequence[str] = ()) -> tuple[Rule, ...]:
    """The limits a mode puts on the configured rules (which cannot loosen them).

    ``read_only_mcp``: the ``<server>:<tool>`` patterns the user's own config marks
    read-only; a mode's ``mcp`` limit spares them (plan mode asks for every other MCP tool,
    whatever the server says of it)."""
    found = MODES.get(mode)
    if found is not None:
        spared = tuple(read_only_mcp)
        return tuple(
            attrs.evolve(rule, unless=spared) if rule.permission == "mcp" and spared else rule
            for rule in found.rules
        )
    source = f"unknown mode {mode!r}"
    return (Rule(permission="*", pattern="*", action="deny", source=source, limit=True),)


def prompt_of(mode: str) -> str:
    """The system prompt a session in ``mode`` runs with (an unknown mode: build's)."""
    found = MODES.get(mode) or MODES[DEFAULT_MODE]
    return found.prompt


def check_client_mode(mode: str) -> None:
    """``InvalidConfigValue`` unless a client may choose ``mode``."""
    if mode not in CLIENT_MODES:
        raise InvalidConfigValue(f"unknown mode {mode!r}: expected {' or '.join(CLIENT_MODES)}")


def loosens(mode: str, than: str) -> bool:
    """Whether running in ``mode`` instead of ``than`` drops one of ``than``'s limits (``build``
    instead of ``plan``): a layer below the user's may not choose such a mode."""
    dropped = set(mode_rules(than)) - set(mode_rules(mode))
    return bool(dropped) and mode in MODES


def yes_approves(mode: str) -> bool:
    """Whether ``--yes`` may approve an ask raised in ``mode``."""
    found = MODES.get(mode)
    return found is not None and found.yes_approves


@attrs.frozen(kw_only=True)
class SubagentScope:
    """How a subagent runs: the mode its asks are made in and the limits it inherits."""

    mode: str
    """The subagent's own mode (``general``, ``explore``), or its parent's when the parent
    confines its children (``plan``: so ``--yes`` never approves its asks either)."""
    limits: tuple[Rule, ...]
    """Appended to the configured rules: every limit its parent runs under, and, under a
    confining parent, the limits of the subagent it is confined to."""
    agent: str
    """The subagent it runs as (its prompt, and the mode its session records)."""


def subagent_scope(agent: str, parent_mode: str, parent_rules: Sequence[Rule]) -> SubagentScope:
    """A subagent is never looser than its parent: its rules are the parent's limits plus its
    own (limits combine by the strictest), and a child of a plan-mode parent is read-only."""
    inherited = tuple(rule for rule in parent_rules if rule.limit)
    parent = MODES.get(parent_mode)
    confined_to = parent.subagents_as if parent is not None else None
    if confined_to is not None:
        limits = (*inherited, *mode_rules(confined_to))
        return SubagentScope(mode=parent_mode, limits=limits, agent=confined_to)
    return SubagentScope(mode=agent, limits=inherited, agent=agent)
