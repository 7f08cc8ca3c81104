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

A configured ``deny`` from the user's own layers (the built-ins, the user file,
``LSP_AGENT_CONFIG``, the command line) is final against the rules of the layers below the
user's (the project's ``.lsp-agent.json``, the editor's settings; ``Rule.below_user``): those
may make a decision stricter, never turn such a deny into ``ask`` or ``allow``.

Saved approvals store the words a model supplied as literals (:func:`literal`): ``[*]``,
``[?]`` and ``[[]`` in a pattern match the characters ``*``, ``?`` and ``[`` themselves.

Resources a tool marks *unjudged* (a command whose name only the shell knows, a path that
cannot be known before a command runs) are never allowed by a rule or a saved approval: a
configured deny matching their text still denies, anything else is asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Literal

import attrs

from lsp_agent.core.documents import FilePreview
from lsp_agent.core.permission.subjects import Subject
from lsp_agent.core.permission_kinds import PermissionKind

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
    below_user: bool = False
    """From a layer below the user's (the project file, the editor's settings): it cannot
    loosen a ``deny`` of the user's own layers."""
    unless: tuple[str, ...] = ()
    """Patterns this rule does not cover (plan mode's ``mcp`` limit spares the tools the
    user's config marks read-only)."""
    sparing: tuple[str, ...] = ()
    """Permissions this rule does not cover: an allow-list is a limit denying ``*`` but
    these (the ``explore`` subagent denies every permission but the reading ones)."""


_STRICTNESS: dict[Action, int] = {"allow": 0, "ask": 1, "deny": 2}


_ESCAPED = frozenset("*?[")


def literal(text: str) -> str:
    """``text`` as a pattern that matches exactly it: ``*``, ``?`` and ``[`` become ``[*]``,
    ``[?]`` and ``[[]``. What a saved approval holds of the words a model supplied (command
    words, paths, MCP tool names), so ``git 'c*'`` never saves a pattern for ``git clean``."""
    return "".join(f"[{ch}]" if ch in _ESCAPED else ch for ch in text)


def wildcard_match(value: str, pattern: str) -> bool:
    """``*`` is any run of characters (``/`` included), ``?`` one character; anchored.

    A pattern ending in `` *`` also matches without its tail: ``ls *`` matches ``ls`` and
    ``ls -la`` but not ``lsof``. ``[*]``, ``[?]`` and ``[[]`` match that one character
    (:func:`literal`); any other ``[`` is itself. Backslashes count as ``/`` on both sides.
    """
    return _compiled(pattern).fullmatch(value.replace("\\", "/")) is not None


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    pattern = pattern.replace("\\", "/")
    optional_tail = pattern.endswith(" *")
    if optional_tail:
        pattern = pattern[:-2]
    body: list[str] = []
    index = 0
    while index < len(pattern):
        ch = pattern[index]
        if (
            ch == "["
            and pattern[index + 1 : index + 2] in _ESCAPED
            and (pattern[index + 2 : index + 3] == "]")
        ):
            body.append(re.escape(pattern[index + 1]))
            index += 3
            continue
        body.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        index += 1
    if optional_tail:
        body.append("( .*)?")
    return re.compile("".join(body), re.DOTALL)


def _covers(rule: Rule, permission: str, resource: str) -> bool:
    return (
        wildcard_match(permission, rule.permission)
        and permission not in rule.sparing
        and wildcard_match(resource, rule.pattern)
        and not any(wildcard_match(resource, spared) for spared in rule.unless)
    )


def evaluate(permission: str, resource: str, rules: Sequence[Rule]) -> Rule | None:
    """The rule deciding the resource, or None (→ ask): the last matching ordinary rule,
    unless a matching limit is stricter (no match counts as ``ask``), and never a rule from
    below the user's layers where the last matching rule of the user's own denies."""
    chosen: Rule | None = None
    users: Rule | None = None
    limits: list[Rule] = []
    for rule in reversed(rules):
        if not _covers(rule, permission, resource):
            continue
        if rule.limit:
            limits.append(rule)
            continue
        if chosen is None:
            chosen = rule
        if users is None and not rule.below_user:
            users = rule
    lifted = chosen is not None and chosen.action != "deny"
    if lifted and users is not None and users.action == "deny":
        chosen = users  # a layer below the user's may tighten, never lift a deny
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
    permission (or the last of the user's own layers, which no lower layer lifts), denies
    ``*``."""
    for rule in rules:
        denies_all = rule.limit and rule.pattern == "*" and rule.action == "deny"
        covered = wildcard_match(permission, rule.permission) and permission not in rule.sparing
        if denies_all and not rule.unless and covered:
            return True
    ordinary = [rule for rule in rules if not rule.limit]
    users = [rule for rule in ordinary if not rule.below_user]
    return _last_denies_all(permission, ordinary) or _last_denies_all(permission, users)


def _last_denies_all(permission: str, rules: Iterable[Rule]) -> bool:
    """Whether the last of ``rules`` for ``permission`` denies ``*``."""
    last: Rule | None = None
    for rule in rules:
        if wildcard_match(permission, rule.permission):
            last = rule
    return last is not None and last.pattern == "*" and last.action == "deny"


@attrs.frozen(kw_only=True)
class PermissionRequest:
    """What a tool asks before it acts.

    ``patterns`` are the resources this call touches (workspace-relative paths, commands);
    ``always`` are the patterns an "allow for session/always" answer would remember.
    ``subject`` is shown to the user (``permission/subjects.py``): the files and diff of an
    edit, a command and its folder, or a url.

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

    permission: PermissionKind
    """What is asked for: the asking tool's own :attr:`Tool.permission`, or a permission
    every tool shares (``external_directory``, ``bash_network``)."""
    patterns: tuple[str, ...]
    always: tuple[str, ...] = ("*",)
    title: str = ""
    description: str | None = None
    subject: Subject | None = None
    previews: tuple[FilePreview, ...] = attrs.field(default=(), eq=False, repr=False)
    unjudged: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()

    @property
    def saves(self) -> tuple[str, ...]:
        """What "for this session" / "always" saves: ``always`` less anything unjudged."""
        return tuple(pattern for pattern in self.always if pattern not in self.unjudged)


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


def options_for(request: PermissionRequest) -> tuple[PermissionOption, ...]:
    """The answers offered, each "session"/"always" naming the exact patterns it saves
    (none when nothing can be saved)."""
    saves = request.saves
    if not saves:
        return (DEFAULT_OPTIONS[0], DEFAULT_OPTIONS[-1])
    shown = ", ".join(saves)
    session, always = DEFAULT_OPTIONS[1], DEFAULT_OPTIONS[2]
    return (
        DEFAULT_OPTIONS[0],
        attrs.evolve(session, name=f"{session.name}: {request.permission} {shown}"),
        attrs.evolve(always, name=f"{always.name} in this project: {request.permission} {shown}"),
        DEFAULT_OPTIONS[-1],
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
