"""Answer a question about the code, or propose a plan, without changing anything."""

from __future__ import annotations

from pathlib import Path

from evals.task import Outcome, Task, Verdict, all_of, answer_mentions, nothing_changed, say, tool

CONFIG = '''\
import os

DEFAULT_PORT = 8731
"""The port the server listens on unless ``APP_PORT`` says otherwise."""


def port() -> int:
    return int(os.environ.get("APP_PORT", DEFAULT_PORT))
'''

APP = """\
from http.server import HTTPServer, SimpleHTTPRequestHandler

from server.config import port


def main() -> None:
    HTTPServer(("127.0.0.1", port()), SimpleHTTPRequestHandler).serve_forever()
"""


def check_port(task: Task, outcome: Outcome) -> Verdict:
    return all_of(
        lambda: nothing_changed(task, outcome),
        lambda: answer_mentions(outcome, "8731", "server/config.py"),
    )


def oracle_port(_root: Path) -> list[dict[str, object]]:
    return [
        tool("grep", pattern="port", include="*.py"),
        tool("read", file_path="server/config.py"),
        say("Port **8731**: `DEFAULT_PORT` in `server/config.py:3`. The `APP_PORT` "
            "environment variable overrides it (`server/config.py:8`)."),
    ]  # fmt: skip


MAILER = '''\
def send_email(to: str, subject: str, body: str) -> None:
    """Hand a message to the outgoing mail queue."""
    raise RuntimeError("no mail server in this example")
'''

REMINDERS = """\
from billing.mailer import send_email


def notify_overdue(invoices: list[dict[str, str]]) -> int:
    sent = 0
    for invoice in invoices:
        if invoice["status"] == "overdue":
            send_email(invoice["email"], "Invoice overdue", f"Invoice {invoice['id']} is due.")
            sent += 1
    return sent
"""

LEDGER = '''\
def balance(entries: list[float]) -> float:
    """The sum of the ledger's entries (mailing is elsewhere)."""
    return sum(entries)
'''


def check_caller(task: Task, outcome: Outcome) -> Verdict:
    return all_of(
        lambda: nothing_changed(task, outcome),
        lambda: answer_mentions(outcome, "notify_overdue", "billing/reminders.py"),
    )


def oracle_caller(_root: Path) -> list[dict[str, object]]:
    return [
        tool("grep", pattern=r"send_email\("),
        say("`notify_overdue` in `billing/reminders.py:8` is the only caller; it mails each "
            "overdue invoice."),
    ]  # fmt: skip


RATES = '''\
import json
import urllib.request


def fetch_rate(base: str, quote: str) -> float:
    """The exchange rate from ``base`` to ``quote``, asked of the rates service."""
    url = f"https://rates.example.invalid/{base}/{quote}"
    with urllib.request.urlopen(url, timeout=10) as response:
        return float(json.load(response)["rate"])
'''


def check_plan(task: Task, outcome: Outcome) -> Verdict:
    return all_of(
        lambda: nothing_changed(task, outcome),
        lambda: answer_mentions(outcome, "rates.py", "fetch_rate"),
    )


def oracle_plan(_root: Path) -> list[dict[str, object]]:
    return [
        tool("read", file_path="rates.py"),
        say("1. In `rates.py:5`, wrap `fetch_rate` with a dict cache keyed by `(base, quote)` "
            "holding `(rate, time.monotonic())`.\n2. Return the cached rate when it is under "
            "60 s old.\n3. Test with a fake `urlopen` and a fake clock: two calls, one fetch."),
    ]  # fmt: skip


TASKS = [
    Task(
        name="answer-default-port",
        category="answer without editing",
        prompt="What port does the server listen on by default, and where is that set?",
        files={"server/__init__.py": "", "server/config.py": CONFIG, "server/app.py": APP},
        check=check_port,
        oracle=oracle_port,
        serve=True,
    ),
    Task(
        name="answer-caller",
        category="answer without editing",
        prompt="Which function calls send_email, and in which file?",
        files={
            "billing/__init__.py": "",
            "billing/mailer.py": MAILER,
            "billing/reminders.py": REMINDERS,
            "billing/ledger.py": LEDGER,
        },
        check=check_caller,
        oracle=oracle_caller,
    ),
    Task(
        name="plan-rate-cache",
        category="answer without editing",
        prompt="Plan how to cache fetch_rate so each currency pair is fetched at most once a "
        "minute. Don't change anything yet.",
        files={"rates.py": RATES},
        check=check_plan,
        oracle=oracle_plan,
        mode="plan",
    ),
]
