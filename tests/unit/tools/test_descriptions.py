"""The tool descriptions speak to the mistakes models make, each with an example."""

from __future__ import annotations

import pytest

from lsp_agent.tools.base import load_description

MISTAKES = {
    # a non-unique old_string: how to make it unique, shown
    "edit": ["not unique", 'old_string: "return None"', "latest `read`"],
    # stale reads and huge files
    "read": ["go stale", "offset: 480, limit: 60", "not\n  `/src/app.py`"],
    "apply_patch": ["latest `read`", "read it again"],
    # long-running commands and huge outputs
    "bash": ["timeout` (e.g. `600000`)", "--watch", "| tail -50"],
    "grep": ['include: "*.py"'],
}


@pytest.mark.parametrize("tool", list(MISTAKES))
def test_the_description_covers_the_mistake_with_an_example(tool: str) -> None:
    text = load_description(tool)
    assert [needle for needle in MISTAKES[tool] if needle not in text] == []
