"""Fix a failing test: the bug is in the code, never in the test."""

from __future__ import annotations

from pathlib import Path

from evals.task import UNITTEST, Task, say, tests_kept_and_passes, tool

STATS = '''\
def mean(values: list[float]) -> float:
    """The arithmetic mean of ``values`` (which must not be empty)."""
    return sum(values) / (len(values) + 1)


def median(values: list[float]) -> float:
    """The middle value of ``values`` once sorted (the mean of the two middle ones)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
'''

TEST_STATS = """\
import unittest

from stats import mean, median


class StatsTest(unittest.TestCase):
    def test_mean(self) -> None:
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_median(self) -> None:
        self.assertEqual(median([3, 1, 2]), 2)
        self.assertEqual(median([4, 1, 3, 2]), 2.5)


if __name__ == "__main__":
    unittest.main()
"""


check_mean = tests_kept_and_passes(
    "test_stats.py",
    "from stats import mean, median\n"
    "assert mean([2, 4]) == 3\nassert mean([5]) == 5\nassert mean([-1, 1, 3]) == 1\n"
    "assert median([5, 1, 4]) == 4\n",
)


def oracle_mean(_root: Path) -> list[dict[str, object]]:
    return [
        tool("bash", command=UNITTEST, description="Run the unit tests"),
        tool("read", file_path="stats.py"),
        tool(
            "edit",
            file_path="stats.py",
            old_string="    return sum(values) / (len(values) + 1)",
            new_string="    return sum(values) / len(values)",
        ),
        tool("bash", command=UNITTEST, description="Run the unit tests again"),
        say("Fixed `mean` in `stats.py:3`: it divided by `len(values) + 1`. The tests pass."),
    ]


TEXT = '''\
import re


def slugify(title: str) -> str:
    """A URL slug: lower case, words joined by single hyphens, nothing but a-z, 0-9 and -."""
    words = re.findall(r"[A-Za-z0-9]+", title)
    return "-".join(words)
'''

TEST_TEXT = """\
import unittest

from text import slugify


class SlugifyTest(unittest.TestCase):
    def test_lower_case_and_hyphens(self) -> None:
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_numbers_stay(self) -> None:
        self.assertEqual(slugify("Top 10 Tips"), "top-10-tips")


if __name__ == "__main__":
    unittest.main()
"""


check_slugify = tests_kept_and_passes(
    "test_text.py",
    "from text import slugify\n"
    "assert slugify('Ça Va -- OK?') == 'a-va-ok', slugify('Ça Va -- OK?')\n"
    "assert slugify('  MIXED case  ') == 'mixed-case'\n"
    "assert slugify('A1 b2') == 'a1-b2'\n",
)


def oracle_slugify(_root: Path) -> list[dict[str, object]]:
    return [
        tool("read", file_path="text.py"),
        tool(
            "edit",
            file_path="text.py",
            old_string='    return "-".join(words)',
            new_string='    return "-".join(word.lower() for word in words)',
        ),
        tool("bash", command=UNITTEST, description="Run the unit tests"),
        say("`slugify` (`text.py:7`) now lower-cases each word. The tests pass."),
    ]


DATES = '''\
def is_leap(year: int) -> bool:
    """Whether ``year`` is a leap year in the Gregorian calendar."""
    return year % 4 == 0
'''

TEST_DATES = """\
import unittest

from dates import is_leap


class LeapTest(unittest.TestCase):
    def test_ordinary_years(self) -> None:
        self.assertTrue(is_leap(2024))
        self.assertFalse(is_leap(2023))

    def test_centuries(self) -> None:
        self.assertFalse(is_leap(1900))
        self.assertTrue(is_leap(2000))


if __name__ == "__main__":
    unittest.main()
"""


check_leap = tests_kept_and_passes(
    "test_dates.py",
    "from dates import is_leap\n"
    "assert [y for y in range(1600, 2401, 100) if is_leap(y)] == [1600, 2000, 2400]\n"
    "assert is_leap(1996) and not is_leap(1999)\n",
)


def oracle_leap(_root: Path) -> list[dict[str, object]]:
    return [
        tool("read", file_path="dates.py"),
        tool(
            "edit",
            file_path="dates.py",
            old_string="    return year % 4 == 0",
            new_string="    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)",
        ),
        say("`is_leap` (`dates.py:3`) now applies the century rule."),
    ]


CONFIG = '''\
from util import parse_bool


def load(text: str) -> dict[str, object]:
    """Settings from ``key = value`` lines; ``debug`` is a boolean."""
    settings: dict[str, object] = {}
    for line in text.splitlines():
        if "=" not in line:
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        settings[key] = parse_bool(value) if key == "debug" else value
    return settings
'''

UTIL = '''\
def parse_bool(text: str) -> bool:
    """``true``/``yes``/``1`` and ``false``/``no``/``0``, in any case."""
    return bool(text)
'''

TEST_CONFIG = """\
import unittest

from config import load


class LoadTest(unittest.TestCase):
    def test_debug_off(self) -> None:
        self.assertEqual(load("name = app\\ndebug = false"), {"name": "app", "debug": False})

    def test_debug_on(self) -> None:
        self.assertEqual(load("debug = YES")["debug"], True)


if __name__ == "__main__":
    unittest.main()
"""


check_config = tests_kept_and_passes(
    "test_config.py",
    "from util import parse_bool\nfrom config import load\n"
    "assert [parse_bool(t) for t in ('true', 'Yes', '1')] == [True] * 3\n"
    "assert [parse_bool(t) for t in ('false', 'NO', '0')] == [False] * 3\n"
    "assert load('debug = 0') == {'debug': False}\n",
)


def oracle_config(_root: Path) -> list[dict[str, object]]:
    return [
        {"tool_calls": [
            {"name": "read", "input": {"file_path": "config.py"}},
            {"name": "read", "input": {"file_path": "util.py"}},
        ]},
        tool(
            "edit",
            file_path="util.py",
            old_string="    return bool(text)",
            new_string='    return text.strip().lower() in ("true", "yes", "1")',
        ),
        tool("bash", command=UNITTEST, description="Run the unit tests"),
        say("The bug was in `parse_bool` (`util.py:3`): `bool(text)` is true for any "
            "non-empty string. It now compares against the true words."),
    ]  # fmt: skip


TASKS = [
    Task(
        name="fix-mean",
        category="fix a failing test",
        prompt="The tests in test_stats.py fail. Find the bug and fix it.",
        files={"stats.py": STATS, "test_stats.py": TEST_STATS},
        check=check_mean,
        oracle=oracle_mean,
        serve=True,
        open_files=("stats.py",),
    ),
    Task(
        name="fix-slugify",
        category="fix a failing test",
        prompt="test_text.py is failing; please fix slugify.",
        files={"text.py": TEXT, "test_text.py": TEST_TEXT},
        check=check_slugify,
        oracle=oracle_slugify,
    ),
    Task(
        name="fix-leap-year",
        category="fix a failing test",
        prompt="Make the failing test in test_dates.py pass.",
        files={"dates.py": DATES, "test_dates.py": TEST_DATES},
        check=check_leap,
        oracle=oracle_leap,
    ),
    Task(
        name="fix-across-files",
        category="fix a failing test",
        prompt="`python3 -m unittest` reports failures in test_config.py. Fix the cause.",
        files={"config.py": CONFIG, "util.py": UTIL, "test_config.py": TEST_CONFIG},
        check=check_config,
        oracle=oracle_config,
    ),
]
