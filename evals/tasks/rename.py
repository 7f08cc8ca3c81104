"""Rename a symbol across files: every use follows, nothing else changes."""

from __future__ import annotations

from pathlib import Path

from evals.task import Outcome, Task, Verdict, all_of, run_python, say, tool

CART = '''\
from dataclasses import dataclass


@dataclass
class Line:
    name: str
    price: float
    quantity: int = 1


def calc_total(lines: list[Line]) -> float:
    """What the lines cost together."""
    return sum(line.price * line.quantity for line in lines)
'''

CHECKOUT = """\
from shop.cart import Line, calc_total


def receipt(lines: list[Line]) -> str:
    total = calc_total(lines)
    return f"{len(lines)} lines, total {total:.2f}"
"""

TEST_CART = """\
import unittest

from shop.cart import Line, calc_total


class TotalTest(unittest.TestCase):
    def test_total(self) -> None:
        self.assertEqual(calc_total([Line("a", 2.0, 3), Line("b", 1.5)]), 7.5)


if __name__ == "__main__":
    unittest.main()
"""


def no_word(root: Path, word: str) -> Verdict:
    left = [
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        if ".git" not in path.parts and word in path.read_text()
    ]
    if left:
        return Verdict(solved=False, reason=f"{word} is still used in {', '.join(left)}")
    return Verdict(solved=True, reason=f"no {word} left")


def check_function(task: Task, outcome: Outcome) -> Verdict:
    return all_of(
        lambda: no_word(outcome.workspace, "calc_total"),
        lambda: run_python(
            outcome.workspace,
            "from shop.cart import Line, compute_total\nfrom shop.checkout import receipt\n"
            "assert compute_total([Line('x', 1.0, 2)]) == 2.0\n"
            "assert receipt([Line('x', 1.0, 2)]) == '1 lines, total 2.00'\n"
            "import unittest, sys\n"
            "suite = unittest.defaultTestLoader.discover('tests', top_level_dir='.')\n"
            "result = unittest.TextTestRunner(stream=sys.stderr).run(suite)\n"
            "assert result.wasSuccessful() and result.testsRun == 1\n",
        ),
    )


def oracle_function(_root: Path) -> list[dict[str, object]]:
    return [
        tool("grep", pattern="calc_total"),
        tool("edit", file_path="shop/cart.py", old_string="def calc_total(",
             new_string="def compute_total("),
        tool("edit", file_path="shop/checkout.py", old_string="calc_total",
             new_string="compute_total", replace_all=True),
        tool("edit", file_path="tests/test_cart.py", old_string="calc_total",
             new_string="compute_total", replace_all=True),
        tool("grep", pattern="calc_total"),
        say("Renamed `calc_total` to `compute_total` in `shop/cart.py:10` and its two users, "
            "`shop/checkout.py` and `tests/test_cart.py`."),
    ]  # fmt: skip


MODELS = '''\
from dataclasses import dataclass


@dataclass
class UserRecord:
    """A user of the service."""

    email: str
    active: bool = True
'''

SERVICE = """\
from models import UserRecord


def sign_up(email: str) -> UserRecord:
    return UserRecord(email=email.strip().lower())


def deactivate(user: UserRecord) -> UserRecord:
    return UserRecord(email=user.email, active=False)
"""

REPORT = '''\
from models import UserRecord


def active_emails(users: list[UserRecord]) -> list[str]:
    """The e-mail addresses of the active users (a UserRecord list), sorted."""
    return sorted(u.email for u in users if u.active)
'''


def check_class(task: Task, outcome: Outcome) -> Verdict:
    return all_of(
        lambda: no_word(outcome.workspace, "UserRecord"),
        lambda: run_python(
            outcome.workspace,
            "from models import Account\nfrom service import sign_up, deactivate\n"
            "from report import active_emails\n"
            "a = sign_up(' X@Y.org ')\nassert isinstance(a, Account) and a.email == 'x@y.org'\n"
            "assert active_emails([a, deactivate(sign_up('b@c.d'))]) == ['x@y.org']\n",
        ),
    )


def oracle_class(_root: Path) -> list[dict[str, object]]:
    return [
        tool("grep", pattern=r"\bUserRecord\b"),
        {"tool_calls": [
            {"name": "edit", "input": {"file_path": path, "old_string": "UserRecord",
                                       "new_string": "Account", "replace_all": True}}
            for path in ("models.py", "service.py", "report.py")
        ]},
        tool("grep", pattern="UserRecord"),
        say("Renamed the class to `Account` (`models.py:5`) and every use in `service.py` and "
            "`report.py`."),
    ]  # fmt: skip


TASKS = [
    Task(
        name="rename-function",
        category="rename across files",
        prompt="Rename calc_total to compute_total everywhere.",
        files={
            "shop/__init__.py": "",
            "shop/cart.py": CART,
            "shop/checkout.py": CHECKOUT,
            "tests/__init__.py": "",
            "tests/test_cart.py": TEST_CART,
        },
        check=check_function,
        oracle=oracle_function,
        serve=True,
    ),
    Task(
        name="rename-class",
        category="rename across files",
        prompt="Rename the class UserRecord to Account across the project.",
        files={"models.py": MODELS, "service.py": SERVICE, "report.py": REPORT},
        check=check_class,
        oracle=oracle_class,
    ),
]
