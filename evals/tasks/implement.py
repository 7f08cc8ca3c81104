"""Implement a function from its docstring and tests."""

from __future__ import annotations

from pathlib import Path

from evals.task import UNITTEST, Task, say, tests_kept_and_passes, tool

DURATION = '''\
def parse_duration(text: str) -> int:
    """Seconds in a duration such as ``"1h30m"``, ``"45s"`` or ``"2h5m10s"``.

    Units are ``h``, ``m`` and ``s``, each at most once and in that order; a bare number
    is seconds. Raises ``ValueError`` for anything else (an empty string included).
    """
    raise NotImplementedError
'''

TEST_DURATION = """\
import unittest

from duration import parse_duration


class ParseDurationTest(unittest.TestCase):
    def test_units(self) -> None:
        self.assertEqual(parse_duration("1h30m"), 5400)
        self.assertEqual(parse_duration("45s"), 45)

    def test_bare_number(self) -> None:
        self.assertEqual(parse_duration("90"), 90)

    def test_garbage(self) -> None:
        with self.assertRaises(ValueError):
            parse_duration("soon")


if __name__ == "__main__":
    unittest.main()
"""

DURATION_SOLUTION = """\
    match = re.fullmatch(r"(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?|(\\d+)", text)
    if not text or match is None:
        raise ValueError(f"not a duration: {text!r}")
    hours, minutes, seconds, bare = (int(g) if g else 0 for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds + bare"""


check_duration = tests_kept_and_passes(
    "test_duration.py",
    "from duration import parse_duration as p\n"
    "assert p('2h5m10s') == 7510\nassert p('3m') == 180\nassert p('1h') == 3600\n"
    "assert p('0') == 0\n"
    "for bad in ('', 'h', '5m1h', '1x', '-3'):\n"
    "    try:\n        p(bad)\n    except ValueError:\n        pass\n"
    "    else:\n        raise AssertionError(bad)\n",
)


def oracle_duration(_root: Path) -> list[dict[str, object]]:
    return [
        {"tool_calls": [
            {"name": "read", "input": {"file_path": "duration.py"}},
            {"name": "read", "input": {"file_path": "test_duration.py"}},
        ]},
        {"tool_calls": [{"name": "apply_patch", "input": {"patch": (
            "*** Begin Patch\n*** Update File: duration.py\n"
            "@@\n+import re\n+\n+\n def parse_duration(text: str) -> int:\n"
            "@@\n     is seconds. Raises ``ValueError`` for anything else (an empty string "
            "included).\n     \"\"\"\n-    raise NotImplementedError\n"
            + "".join(f"+{line}\n" for line in DURATION_SOLUTION.splitlines())
            + "*** End Patch"
        )}}]},
        tool("bash", command=UNITTEST, description="Run the unit tests"),
        say("Implemented `parse_duration` (`duration.py:5`) with one regular expression."),
    ]  # fmt: skip


ROMAN = '''\
def to_roman(number: int) -> str:
    """``number`` (1 to 3999) in Roman numerals, subtractive forms included: 4 is ``IV``,
    1994 is ``MCMXCIV``. Raises ``ValueError`` outside that range."""
    raise NotImplementedError
'''

TEST_ROMAN = """\
import unittest

from roman import to_roman


class RomanTest(unittest.TestCase):
    def test_examples(self) -> None:
        self.assertEqual(to_roman(4), "IV")
        self.assertEqual(to_roman(1994), "MCMXCIV")

    def test_range(self) -> None:
        with self.assertRaises(ValueError):
            to_roman(0)


if __name__ == "__main__":
    unittest.main()
"""

ROMAN_BODY = """\
    if not 1 <= number <= 3999:
        raise ValueError(f"out of range: {number}")
    symbols = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
               (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = ""
    for value, symbol in symbols:
        count, number = divmod(number, value)
        out += symbol * count
    return out"""


check_roman = tests_kept_and_passes(
    "test_roman.py",
    "from roman import to_roman as r\n"
    "assert [r(n) for n in (1, 9, 14, 40, 90, 400, 2024, 3999)] == "
    "['I', 'IX', 'XIV', 'XL', 'XC', 'CD', 'MMXXIV', 'MMMCMXCIX']\n"
    "for bad in (-1, 4000):\n"
    "    try:\n        r(bad)\n    except ValueError:\n        pass\n"
    "    else:\n        raise AssertionError(bad)\n",
)


def oracle_roman(_root: Path) -> list[dict[str, object]]:
    return [
        tool("read", file_path="roman.py"),
        tool(
            "edit",
            file_path="roman.py",
            old_string="    raise NotImplementedError",
            new_string=ROMAN_BODY,
        ),
        say("Implemented `to_roman` (`roman.py:1`) with a table of values, largest first."),
    ]


STACK = '''\
class Stack:
    """Last in, first out."""

    def __init__(self) -> None:
        self._items: list[object] = []

    def push(self, item: object) -> None:
        self._items.append(item)

    def pop(self) -> object:
        """The top item, removed. Raises ``IndexError`` when the stack is empty."""
        if not self._items:
            raise IndexError("pop from an empty stack")
        return self._items.pop()

    def peek(self) -> object:
        """The top item, left in place. Raises ``IndexError`` when the stack is empty."""
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._items)
'''

TEST_STACK = """\
import unittest

from stack import Stack


class StackTest(unittest.TestCase):
    def test_push_pop(self) -> None:
        s = Stack()
        s.push(1)
        s.push(2)
        self.assertEqual(s.pop(), 2)
        self.assertEqual(len(s), 1)


if __name__ == "__main__":
    unittest.main()
"""


check_peek = tests_kept_and_passes(
    "test_stack.py",
    "from stack import Stack\ns = Stack()\n"
    "try:\n    s.peek()\nexcept IndexError:\n    pass\n"
    "else:\n    raise AssertionError('peek on empty')\n"
    "s.push('a'); s.push('b')\nassert s.peek() == 'b'\nassert len(s) == 2\n"
    "assert s.pop() == 'b' and s.peek() == 'a'\n",
)


PEEK = "    def peek(self) -> object:\n" + (
    '        """The top item, left in place. Raises ``IndexError`` when the stack is empty."""\n'
)


def oracle_peek(_root: Path) -> list[dict[str, object]]:
    return [
        tool("read", file_path="stack.py"),
        tool(
            "edit",
            file_path="stack.py",
            old_string=PEEK + "        raise NotImplementedError",
            new_string=PEEK + "        if not self._items:\n"
            '            raise IndexError("peek at an empty stack")\n'
            "        return self._items[-1]",
        ),
        say("`Stack.peek` (`stack.py:16`) returns the last item and raises `IndexError` "
            "when empty."),
    ]  # fmt: skip


TASKS = [
    Task(
        name="implement-parse-duration",
        category="implement from docstring and tests",
        prompt="Implement parse_duration in duration.py; its docstring and test_duration.py "
        "say what it must do.",
        files={"duration.py": DURATION, "test_duration.py": TEST_DURATION},
        check=check_duration,
        oracle=oracle_duration,
    ),
    Task(
        name="implement-roman",
        category="implement from docstring and tests",
        prompt="Implement to_roman in roman.py.",
        files={"roman.py": ROMAN, "test_roman.py": TEST_ROMAN},
        check=check_roman,
        oracle=oracle_roman,
    ),
    Task(
        name="implement-stack-peek",
        category="implement from docstring and tests",
        prompt="Stack.peek is not implemented yet. Implement it as documented.",
        files={"stack.py": STACK, "test_stack.py": TEST_STACK},
        check=check_peek,
        oracle=oracle_peek,
    ),
]
