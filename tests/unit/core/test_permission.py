"""The rule engine, table-driven (cases after opencode's permission tests)."""

from __future__ import annotations

import pytest

from lsp_agent.core.documents import FilePreview
from lsp_agent.core.modes import mode_rules
from lsp_agent.core.permission.rules import (
    Action,
    PermissionRequest,
    Rule,
    decide,
    evaluate,
    hidden,
    wildcard_match,
)
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.testing.tools import tool_spec


def r(permission: str, pattern: str, action: Action, source: str = "test") -> Rule:
    return Rule(permission=permission, pattern=pattern, action=action, source=source)


@pytest.mark.parametrize(
    ("value", "pattern", "expected"),
    [
        ("src/a.py", "src/a.py", True),
        ("src/a.py", "src/*", True),
        ("src/deep/a.py", "src/*", True),  # * crosses /
        ("src/a.py", "*.py", True),
        ("src/a.pyc", "*.py", False),
        ("a.py", "?.py", True),
        ("ab.py", "?.py", False),
        ("ls", "ls *", True),  # trailing " *" is optional
        ("ls -la", "ls *", True),
        ("lsof", "ls *", False),
        ("git status --short", "git status*", True),
        ("rm -rf /", "rm *", True),
        ("C:\\x\\y", "C:/x/*", True),  # backslashes count as /
        ("a+b(c)", "a+b(c)", True),  # regex characters are literal
        ("line1\nline2", "line1*", True),  # * spans newlines
        ("anything", "*", True),
        ("", "*", True),
    ],
)
def test_wildcard_match(value: str, pattern: str, expected: bool) -> None:
    assert wildcard_match(value, pattern) is expected


@pytest.mark.parametrize(
    ("rules", "permission", "resource", "expected"),
    [
        ([], "edit", "a.py", None),  # no rule → ask (None)
        ([r("edit", "*", "allow")], "edit", "a.py", "allow"),
        ([r("edit", "*", "allow"), r("edit", "*.env", "deny")], "edit", ".env", "deny"),
        (
            [r("edit", "*.env", "deny"), r("edit", "*", "allow")],
            "edit",
            ".env",
            "allow",
        ),  # last wins
        ([r("*", "*", "deny")], "read", "x", "deny"),  # wildcard permission names
        ([r("*", "*", "deny"), r("read", "*", "allow")], "read", "x", "allow"),
        ([r("read", "*", "allow"), r("*", "*", "deny")], "read", "x", "deny"),
        ([r("mcp_*", "*", "allow")], "mcp_github", "x", "allow"),
        ([r("mcp_*", "*", "allow")], "read", "x", None),
        ([r("bash", "git *", "allow")], "bash", "git log", "allow"),
        ([r("bash", "git *", "allow")], "bash", "gitk", None),
    ],
)
def test_evaluate_last_match_wins(
    rules: list[Rule], permission: str, resource: str, expected: str | None
) -> None:
    rule = evaluate(permission, resource, rules)
    assert (rule.action if rule else None) == expected


def test_layers_are_appended_in_order_so_later_layers_override() -> None:
    user = [r("bash", "*", "ask", "user"), r("bash", "git *", "allow", "user")]
    project = [r("bash", "git push*", "deny", "project")]
    rules = [*user, *project]
    assert decide("bash", ["git status"], rules).action == "allow"
    assert decide("bash", ["git push origin"], rules).action == "deny"
    assert decide("bash", ["make"], rules).action == "ask"


def test_one_denied_resource_denies_the_whole_request() -> None:
    rules = [r("bash", "*", "allow"), r("bash", "rm *", "deny")]
    decision = decide("bash", ["ls", "rm -rf x"], rules)
    assert decision.action == "deny"
    assert decision.rules[0].pattern == "rm *"


def test_any_ask_makes_the_request_an_ask() -> None:
    rules = [r("bash", "ls *", "allow")]
    assert decide("bash", ["ls", "make"], rules).action == "ask"
    assert decide("bash", ["ls", "ls -la"], rules).action == "allow"


def test_saved_approvals_turn_asks_into_allows() -> None:
    saved = [r("edit", "*", "allow", "saved")]
    assert decide("edit", ["a.py"], [], saved).action == "allow"


def test_a_configured_deny_beats_any_saved_approval() -> None:
    configured = [r("bash", "*", "ask"), r("bash", "rm *", "deny")]
    saved = [r("bash", "*", "allow", "saved")]
    assert decide("bash", ["rm -rf /"], configured, saved).action == "deny"
    assert decide("bash", ["make"], configured, saved).action == "allow"


def test_an_empty_resource_list_is_decided_on_star() -> None:
    assert decide("todowrite", [], [r("todowrite", "*", "allow")]).action == "allow"


@pytest.mark.parametrize(
    ("rules", "is_hidden"),
    [
        ([], False),
        ([r("edit", "*", "deny")], True),
        ([r("edit", "*.env", "deny")], False),  # a partial deny keeps the tool visible
        ([r("edit", "*", "ask")], False),
        ([r("edit", "*", "deny"), r("edit", "src/*", "allow")], False),  # a later allow un-hides
        ([r("*", "*", "deny")], True),
    ],
)
def test_hidden_only_when_the_last_rule_denies_everything(
    rules: list[Rule], is_hidden: bool
) -> None:
    assert hidden("edit", rules) is is_hidden


def test_a_tool_is_governed_and_hidden_by_the_permission_it_declares() -> None:
    spec = tool_spec("github_create_issue", permission=PermissionKind.MCP)
    assert hidden(spec.permission, [r("mcp", "*", "deny")])
    assert not hidden(spec.permission, [r("github_create_issue", "*", "deny")])


def test_explore_is_an_allow_list_of_the_reading_permissions() -> None:
    """Every permission but the reading ones is denied (and hidden) in ``explore``, even
    where the configured rules allow everything: a permission added later is denied there
    too, unless it is added to the list on purpose."""
    rules = [r("*", "*", "allow"), *mode_rules("explore")]
    reading = {"read", "list", "glob", "grep", "diagnostics", "external_directory"}
    for kind in PermissionKind:
        expected = "allow" if kind in reading else "deny"
        assert decide(kind, ["x"], rules).action == expected, kind
        assert hidden(kind, rules) is (kind not in reading), kind
    # a saved approval cannot lift it either
    assert decide("mcp", ["srv:get"], rules, [r("mcp", "*", "allow")]).action == "deny"


def test_plan_mode_denies_edits_and_asks_for_every_command() -> None:
    rules = [r("edit", "*", "allow"), r("bash", "*", "allow"), *mode_rules("plan")]
    assert decide("edit", ["a.py"], rules).action == "deny"
    assert decide("bash", ["ls"], rules).action == "ask"
    assert hidden("edit", rules)
    # saved approvals cannot loosen plan mode's edit deny
    assert decide("edit", ["a.py"], rules, [r("edit", "*", "allow")]).action == "deny"


def test_build_mode_adds_nothing_and_an_unknown_mode_denies_everything() -> None:
    assert mode_rules("build") == ()
    rules = [r("read", "*", "allow"), *mode_rules("yolo")]
    assert decide("read", ["a.py"], rules).action == "deny"
    assert hidden("read", rules)


def test_previews_take_no_part_in_equality_or_repr() -> None:
    preview = FilePreview(path="/w/a.py", base_text="SECRET-BASE\n", proposed_text=None)
    with_preview = PermissionRequest(permission="edit", patterns=("a.py",), previews=(preview,))

    assert with_preview == PermissionRequest(permission="edit", patterns=("a.py",))
    assert with_preview.previews == (preview,)
    assert "SECRET-BASE" not in repr(with_preview)
