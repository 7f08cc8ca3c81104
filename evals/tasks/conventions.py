"""Follow the project's conventions, as its AGENTS.md states them."""

from __future__ import annotations

from pathlib import Path

from evals.task import Outcome, Task, Verdict, all_of, run_python, say, tool

AGENTS_STYLE = """\
# Conventions

- Every public function has type annotations on all parameters and the return value, and a
  docstring.
- Never use `print` in library code; use the module's `logging` logger.
"""

TEXTUTILS = '''\
import logging

log = logging.getLogger(__name__)


def shout(text: str) -> str:
    """``text`` in upper case, with an exclamation mark."""
    log.debug("shouting %r", text)
    return text.upper() + "!"
'''


def check_word_count(_task: Task, outcome: Outcome) -> Verdict:
    return run_python(
        outcome.workspace,
        "import ast, inspect, textutils\n"
        "f = textutils.word_count\n"
        "assert f('two  words\\nthree') == 3 and f('') == 0 and f('  ') == 0\n"
        "node = next(n for n in ast.parse(inspect.getsource(textutils)).body\n"
        "            if isinstance(n, ast.FunctionDef) and n.name == 'word_count')\n"
        "assert ast.get_docstring(node), 'no docstring'\n"
        "assert node.returns is not None, 'no return annotation'\n"
        "assert all(a.annotation is not None for a in node.args.args), 'unannotated'\n"
        "assert 'print(' not in inspect.getsource(textutils), 'print used'\n",
    )


def oracle_word_count(_root: Path) -> list[dict[str, object]]:
    return [
        tool("read", file_path="textutils.py"),
        tool("edit", file_path="textutils.py",
             old_string='    return text.upper() + "!"\n',
             new_string='    return text.upper() + "!"\n\n\n'
             "def word_count(text: str) -> int:\n"
             '    """How many whitespace-separated words ``text`` has."""\n'
             "    return len(text.split())\n"),
        say("Added `word_count` (`textutils.py:12`), annotated and documented as AGENTS.md "
            "asks."),
    ]  # fmt: skip


AGENTS_CHANGELOG = """\
# Working on this project

Every user-visible change adds one line to the `## Unreleased` section at the top of
CHANGELOG.md, in the form `- <what changed>`.
"""

CHANGELOG = """\
# Changelog

## Unreleased

## 1.2.0

- The greeting can be configured.
"""

GREET = '''\
def greeting(name: str) -> str:
    """What the app says to ``name``."""
    return f"Hi {name}"
'''


def check_changelog(_task: Task, outcome: Outcome) -> Verdict:
    text = (outcome.workspace / "CHANGELOG.md").read_text()
    unreleased = text.split("## Unreleased", 1)[-1].split("## 1.2.0", 1)[0]
    if not any(line.startswith("- ") for line in unreleased.splitlines()):
        return Verdict(solved=False, reason="no line under ## Unreleased in CHANGELOG.md")
    return run_python(
        outcome.workspace,
        "from greet import greeting\nassert greeting('Ann').startswith('Hello'), greeting('Ann')\n"
        "assert 'Ann' in greeting('Ann')\n",
    )


def oracle_changelog(_root: Path) -> list[dict[str, object]]:
    return [
        {"tool_calls": [
            {"name": "read", "input": {"file_path": "greet.py"}},
            {"name": "read", "input": {"file_path": "CHANGELOG.md"}},
        ]},
        tool("edit", file_path="greet.py", old_string='    return f"Hi {name}"',
             new_string='    return f"Hello {name}"'),
        tool("edit", file_path="CHANGELOG.md", old_string="## Unreleased\n",
             new_string="## Unreleased\n\n- The greeting says Hello instead of Hi.\n"),
        say("`greeting` (`greet.py:3`) says Hello; the change is noted in `CHANGELOG.md:5`."),
    ]  # fmt: skip


AGENTS_TESTS = """\
# Tests

Tests live in `tests/`, one file per module named `test_<module>.py`, written with the
standard library's `unittest`. Run them with `python3 -m unittest discover -s tests -t .`.
"""

MATHUTIL = '''\
def clamp(value: float, low: float, high: float) -> float:
    """``value`` limited to the range ``low``..``high``."""
    return max(low, min(value, high))
'''

TEST_CLAMP = """\
import unittest

from mathutil import clamp


class ClampTest(unittest.TestCase):
    def test_inside_and_outside(self) -> None:
        self.assertEqual(clamp(5, 0, 10), 5)
        self.assertEqual(clamp(-1, 0, 10), 0)
        self.assertEqual(clamp(11, 0, 10), 10)


if __name__ == "__main__":
    unittest.main()
"""


def check_test_layout(task: Task, outcome: Outcome) -> Verdict:
    def placed() -> Verdict:
        path = outcome.workspace / "tests" / "test_mathutil.py"
        if not path.is_file() or "clamp" not in path.read_text():
            return Verdict(solved=False, reason="no tests/test_mathutil.py testing clamp")
        if (outcome.workspace / "mathutil.py").read_text() != MATHUTIL:
            return Verdict(solved=False, reason="mathutil.py was changed")
        return Verdict(solved=True, reason="")

    return all_of(
        placed,
        lambda: run_python(
            outcome.workspace,
            "import sys, unittest\n"
            "suite = unittest.defaultTestLoader.discover('tests', top_level_dir='.')\n"
            "result = unittest.TextTestRunner(stream=sys.stderr).run(suite)\n"
            "assert result.wasSuccessful() and result.testsRun >= 1\n",
        ),
    )


def oracle_test_layout(_root: Path) -> list[dict[str, object]]:
    return [
        tool("read", file_path="mathutil.py"),
        tool("write", file_path="tests/test_mathutil.py", content=TEST_CLAMP),
        tool("bash", command="python3 -m unittest discover -s tests -t .",
             description="Run the tests as AGENTS.md says"),
        say("Added `tests/test_mathutil.py` with a `clamp` test; it passes."),
    ]  # fmt: skip


TASKS = [
    Task(
        name="agents-md-annotations",
        category="follow AGENTS.md",
        prompt="Add a function word_count(text) to textutils.py that counts the "
        "whitespace-separated words.",
        files={"AGENTS.md": AGENTS_STYLE, "textutils.py": TEXTUTILS},
        check=check_word_count,
        oracle=oracle_word_count,
    ),
    Task(
        name="agents-md-changelog",
        category="follow AGENTS.md",
        prompt="The app should greet people with 'Hello' rather than 'Hi'.",
        files={"AGENTS.md": AGENTS_CHANGELOG, "CHANGELOG.md": CHANGELOG, "greet.py": GREET},
        check=check_changelog,
        oracle=oracle_changelog,
    ),
    Task(
        name="agents-md-test-layout",
        category="follow AGENTS.md",
        prompt="Add a unit test for clamp in mathutil.py.",
        files={"AGENTS.md": AGENTS_TESTS, "mathutil.py": MATHUTIL, "tests/__init__.py": ""},
        check=check_test_layout,
        oracle=oracle_test_layout,
    ),
]
