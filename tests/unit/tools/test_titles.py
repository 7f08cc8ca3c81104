"""Each built-in tool titles its calls in plain words (``Tool.describe``), through the
registry's spec: what every ``tool_call_update`` carries as ``title``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.tools.registry import default_registry
from lsp_agent.workspace.truncation import OutputLimits

ROOT = "/home/u/proj"


def describe(name: str, arguments: dict[str, Any], tmp_path: Path, **options: Any) -> str | None:
    registry = default_registry(
        RecordingEditor(), limits=OutputLimits(), spill_root=tmp_path, **options
    )
    (spec,) = [spec for spec in registry.specs() if spec.name == name]
    assert spec.describe is not None
    return spec.describe(arguments, (ROOT,))


@pytest.mark.parametrize(
    ("name", "arguments", "title"),
    [
        ("bash", {"command": "python3 hello.py"}, "Run python3 hello.py"),
        ("bash", {"command": "make\n  test", "description": "Runs the tests"}, "Run make test"),
        (
            "edit",
            {"file_path": f"{ROOT}/src/app.py", "old_string": "a", "new_string": "b"},
            "Edit src/app.py",
        ),
        ("write", {"file_path": "src/new.py", "content": ""}, "Write src/new.py"),
        ("read", {"file_path": "README.md"}, "Read README.md"),
        ("grep", {"pattern": "foo"}, "Search for 'foo'"),
        ("grep", {"pattern": "foo", "path": f"{ROOT}/src"}, "Search for 'foo' in src"),
        ("glob", {"pattern": "**/*.py"}, "Find files **/*.py"),
        ("list", {}, "List ."),
        ("webfetch", {"url": "https://example.com/x"}, "Fetch https://example.com/x"),
        ("todowrite", {"todos": []}, "Update the todo list"),
        ("skill", {"name": "release"}, "Load the skill release"),
        (
            "task",
            {"description": "find x", "prompt": "where?", "subagent_type": "explore"},
            "Start the explore subagent: find x",
        ),
        (
            "apply_patch",
            {"patch": "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch"},
            "Edit a.py",
        ),
    ],
)
def test_a_call_is_titled_in_the_tools_own_words(
    name: str, arguments: dict[str, Any], title: str, tmp_path: Path
) -> None:
    assert describe(name, arguments, tmp_path) == title


def test_input_that_does_not_fit_has_no_title_yet(tmp_path: Path) -> None:
    assert describe("read", {}, tmp_path) is None  # still streaming: the tool's name is shown


def test_a_title_never_shows_a_secret(tmp_path: Path) -> None:
    secret = "sk-test-0123456789abcdef0123"
    title = describe(
        "bash",
        {"command": f"curl -H 'x: {secret}' example.com"},
        tmp_path,
        secrets=SecretFilter({"API_KEY": secret}),
    )
    assert title is not None
    assert secret not in title
