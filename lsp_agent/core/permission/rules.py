"""Permission as data: rules, matching, and the decision for one request.

A rule says: for ``permission`` (a tool's permission key such as ``edit``; ``*`` wildcards
allowed) and ``pattern`` (what the tool touches: a path, a command), do ``action``. The last
matching rule wins; no match means ``ask``.

Saved approvals ("always" for the project, "for this session") never beat a configured
``deny``: a request is first decided on the configured rules alone, and only when none of its
resources is denied there are the saved approvals appended.

A rule may be a *limit* (a mode's rules, and what a subagent inherits from its parent; both
in ``modes.py``): a limit can only make a decision stricter. Whatever its place, no later
rule and no saved approval loosens it, and limits combine by the strictest, so a subagent
under several is bound by all of them (the intersection).

Resources a tool marks *unjudged* (a command whose name only the shell knows, a path that
cannot be known before a command runs) are never allowed by a rule or a saved approval: a
configured deny matching their text still denies, anything else is asked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

import attrs

from lsp_agent.core.documents import FilePreview
from lsp_agent.core.messages import ToolSpec

Action = Literal["allow", "ask", "deny"]
OptionKind = Literal["allow_once", "allow_session", "allow_always", "reject_once"]


@attrs.frozen(kw_only=True)
class Rule:
    permission: str
    pattern: str
    action: Action
    source: str = "built-in"
    limit: bool = False
    """A limit (a mode's rule): it can make a decision stricter, never looser."""


_STRICTNESS: dict[Action, int] = {"allow": 0, "ask": 1, "deny": 2}


def wildcard_match(value: str, pattern: str) -> bool:
    """``*`` is any run of characters (``/`` included), ``?`` one character; anchored.

    A pattern ending in `` *`` also matches without its tail: ``ls *`` matches ``ls`` and
    ``ls -la`` but not ``lsof``. Backslashes count as ``/`` on both sides.
    """
    return _compiled(pattern).fullmatch(value.replace("\\", "/")) is not None


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    pattern = pattern.replace("\\", "/")
    optional_tail = pattern.endswith(" *")
    if optional_tail:
        pattern = pattern[:-2]
    body = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    if optional_tail:
        body += "( .*)?"
    return re.compile(body, re.DOTALL)


def evaluate(permission: str, resource: str, rules: Sequence[Rule]) -> Rule | None:
    """The rule deciding the resource, or None (→ ask): the last matching ordinary rule,
    unless a matching limit is stricter (no match counts as ``ask``)."""
    chosen: Rule | None = None
    limits: list[Rule] = []
    for rule in reversed(rules):
        if not (
            wildcard_match(permission, rule.permission) and wildcard_match(resource, rule.pattern)
        ):
            continue
        if rule.limit:
            limits.append(rule)
        elif chosen is None:
            chosen = rule
    strictness = _STRICTNESS[chosen.action] if chosen is not None else _STRICTNESS["ask"]
    for rule in limits:
        if _STRICTNESS[rule.action] > strictness or (chosen is None and rule.action == "ask"):
            chosen, strictness = rule, _STRICTNESS[rule.action]
    return chosen


@attrs.frozen(kw_only=True)
class Decision:
    action: Action
    rules: tuple[Rule, ...] = ()
    """The rules that decided (for the message the model reads on a deny)."""


def decide(
    permission: str,
    resources: Sequence[str],
    configured: Sequence[Rule],
    saved: Sequence[Rule] = (),
    *,
    unjudged: Sequence[str] = (),
) -> Decision:
    """Deny if any resource is denied; else ask if any needs asking; else allow.

    Configured denies are checked first and alone, so no saved approval can override one.
    ``unjudged`` resources (also in ``resources``) are at best asked.
    """
    resources = [*(resources or ["*"]), *(r for r in unjudged if r not in resources)]
    denied = [r for r in (evaluate(permission, res, configured) for res in resources) if r]
    denied = [r for r in denied if r.action == "deny"]
    if denied:
        return Decision(action="deny", rules=tuple(denied))
    combined = [*configured, *saved]
    outcome: Action = "allow"
    deciding: list[Rule] = []
    for resource in resources:
        if resource in unjudged:
            outcome = "ask"  # no rule may allow what cannot be judged
            continue
        rule = evaluate(permission, resource, combined)
        action: Action = rule.action if rule is not None else "ask"
        if rule is not None:
            deciding.append(rule)
        if action == "deny":
            return Decision(action="deny", rules=(rule,) if rule else ())
        if action == "ask":
            outcome = "ask"
    return Decision(action=outcome, rules=tuple(deciding))


def hidden(permission: str, rules: Sequence[Rule]) -> bool:
    """A tool is withheld from the model when a limit, or the last ordinary rule for its
    permission, denies ``*``."""
    for rule in rules:
        denies_all = rule.limit and rule.pattern == "*" and rule.action == "deny"
        if denies_all and wildcard_match(permission, rule.permission):
            return True
    for rule in reversed(rules):
        if not rule.limit and wildcard_match(permission, rule.permission):
            return rule.pattern == "*" and rule.action == "deny"
    return False


@attrs.frozen(kw_only=True)
class PermissionRequest:
    """What a tool asks before it acts.

    ``patterns`` are the resources this call touches (workspace-relative paths, commands);
    ``always`` are the patterns an "allow for session/always" answer would remember.
    ``subject`` is shown to the user: ``{type: "edit", files, patch}``,
    ``{type: "command", command, cwd}`` or ``{type: "fetch", url}``.

    ``previews`` (``edit`` asks) are the before/after texts of every file, for an editor that
    shows a diff. They live in memory only: the gate never copies them into an event (the
    ``subject`` carries the unified diff), and they take no part in equality.

    ``unjudged`` are resources that cannot be judged (a command named by an expansion, a line
    that does not parse, a path only the running shell knows): no rule or saved approval
    allows them and only a person may (``--yes`` never does).

    ``protected`` names the protected files this write touches, each with why
    (``core/permission/protected.py``): the gate asks a person whatever the rules and saved
    approvals say (a configured deny still denies), ``--yes`` never approves it, and the
    answer is never saved.
    """

    permission: str
    patterns: tuple[str, ...]
    always: tuple[str, ...] = ("*",)
    title: str = ""
    description: str | None = None
    subject: dict[str, Any] | None = None
    previews: tuple[FilePreview, ...] = attrs.field(default=(), eq=False, repr=False)
    unjudged: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class PermissionVerdict:
    """The answer a tool gets. When not ``allowed``, ``message`` is what the model reads and
    ``stop_turn`` says the user wants the turn to end (a reject without a reason)."""

    allowed: bool
    message: str = ""
    stop_turn: bool = False
    modified: Mapping[str, str] = attrs.field(factory=dict, hash=False, repr=False)
    """An allowed ``edit`` ask the user edited first: absolute path → the whole text the user
    wants that file to have (the editor's buffer form), only for files the ask's previews
    name. The tool applies it instead of its own proposal and tells the model."""


ALLOWED = PermissionVerdict(allowed=True)

REJECTED_MESSAGE = "The user rejected permission to use this specific tool call."


def denied_message(permission: str, rules: Sequence[Rule]) -> str:
    shown = "; ".join(f"{r.permission} {r.pattern!r}: {r.action} ({r.source})" for r in rules)
    return (
        "The user has specified a rule which prevents you from using this specific tool "
        f"call ({permission}). Relevant rules: {shown or 'none'}."
    )


def rejected_with_reason(reason: str) -> str:
    return (
        "The user rejected permission to use this specific tool call with the following "
        f"feedback: {reason}"
    )


# -- permission keys --------------------------------------------------------------------


def permission_key(spec: ToolSpec) -> str:
    """The permission a tool is governed by: the one its spec names (``mcp`` for every MCP
    tool), else ``edit`` for every tool of kind ``edit``, else the tool's own name."""
    if spec.permission is not None:
        return spec.permission
    return "edit" if spec.kind == "edit" else spec.name


# -- asking the user ------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class PermissionOption:
    option_id: str
    name: str
    kind: OptionKind


DEFAULT_OPTIONS = (
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(
        option_id="allow_session", name="Allow for this session", kind="allow_session"
    ),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
)


@attrs.frozen(kw_only=True)
class PermissionAsk:
    """What the editor shows (protocol.md §4 ``agent/session/requestPermission``)."""

    session_id: str
    tool_call_id: str
    mode: str
    request: PermissionRequest
    options: tuple[PermissionOption, ...] = DEFAULT_OPTIONS


@attrs.frozen(kw_only=True)
class PermissionReply:
    """The user's answer. ``kind`` None means the ask was cancelled (dismissed).

    ``modified``: with an allow, the files whose proposal the user edited, absolute path →
    the whole new text (protocol.md §4 ``modifiedContent``); the gate keeps only the files of
    the ask."""

    kind: OptionKind | None
    reason: str | None = None
    modified: Mapping[str, str] = attrs.field(factory=dict, hash=False, repr=False)
