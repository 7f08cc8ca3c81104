"""Fix the error a diagnostic reports, asked the way an editor's code action asks."""

from __future__ import annotations

from pathlib import Path

from evals.task import Outcome, Task, Verdict, run_python, say, tool

INVENTORY = '''\
def restock(levels: dict[str, int], minimum: int = 5) -> dict[str, int]:
    """How many of each item to order so that every level reaches ``minimum``."""
    order = {}
    for item, level in levels.items():
        if level < minimum:
            order[item] = minimum - level
    totl = sum(order.values())
    if total == 0:
        return {}
    return order
'''


def check_undefined(_task: Task, outcome: Outcome) -> Verdict:
    return run_python(
        outcome.workspace,
        "from inventory import restock\n"
        "assert restock({'a': 1, 'b': 9}) == {'a': 4}\nassert restock({'a': 7}) == {}\n"
        "assert restock({'a': 0}, minimum=2) == {'a': 2}\n",
    )


def oracle_undefined(_root: Path) -> list[dict[str, object]]:
    return [
        tool("read", file_path="inventory.py"),
        tool("edit", file_path="inventory.py", old_string="    totl = sum(order.values())",
             new_string="    total = sum(order.values())"),
        say("Fixed the typo at `inventory.py:7`: the sum was assigned to `totl`."),
    ]  # fmt: skip


REPORT = '''\
def format_total(count: int) -> str:
    """``Total: <count>``, for the report's last line."""
    return "Total: " + count
'''


def check_concat(_task: Task, outcome: Outcome) -> Verdict:
    return run_python(
        outcome.workspace,
        "from report import format_total\n"
        "assert format_total(3) == 'Total: 3'\nassert format_total(0) == 'Total: 0'\n",
    )


def oracle_concat(_root: Path) -> list[dict[str, object]]:
    return [
        tool("read", file_path="report.py"),
        tool("edit", file_path="report.py", old_string='    return "Total: " + count',
             new_string='    return f"Total: {count}"'),
        say("`format_total` (`report.py:3`) now formats the number instead of adding it to a "
            "string."),
    ]  # fmt: skip


TASKS = [
    Task(
        name="fix-undefined-name",
        category="fix a diagnostic",
        prompt='Fix this problem in inventory.py:8: "total" is not defined '
        "(Pyflakes F821, undefined name)",
        files={"inventory.py": INVENTORY},
        check=check_undefined,
        oracle=oracle_undefined,
        serve=True,
        open_files=("inventory.py",),
        diagnostics=(("inventory.py", 8, '"total" is not defined'),),
    ),
    Task(
        name="fix-type-error",
        category="fix a diagnostic",
        prompt='Fix this problem in report.py:3: Operator "+" not supported for types '
        '"Literal[\'Total: \']" and "int" (Pyright reportOperatorIssue)',
        files={"report.py": REPORT},
        check=check_concat,
        oracle=oracle_concat,
    ),
]
