"""A small feature over several files: code, its documentation, verified by running it."""

from __future__ import annotations

from pathlib import Path

from evals.task import Outcome, Task, Verdict, all_of, run_python, say, tool

CLI = """\
import argparse


def greeting(name: str) -> str:
    return f"Hello, {name}!"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="hello")
    parser.add_argument("--name", default="world")
    args = parser.parse_args(argv)
    print(greeting(args.name))


if __name__ == "__main__":
    main()
"""

README = """\
# hello

Usage: `python3 cli.py [--name NAME]`
"""


def check_shout(_task: Task, outcome: Outcome) -> Verdict:
    def documented() -> Verdict:
        if "--shout" not in (outcome.workspace / "README.md").read_text():
            return Verdict(solved=False, reason="README.md does not mention --shout")
        return Verdict(solved=True, reason="")

    return all_of(
        documented,
        lambda: run_python(
            outcome.workspace,
            "import contextlib, io, cli\n"
            "def run(*argv):\n"
            "    out = io.StringIO()\n"
            "    with contextlib.redirect_stdout(out):\n"
            "        cli.main(list(argv))\n"
            "    return out.getvalue().strip()\n"
            "shouted = run('--name', 'Bo', '--shout')\n"
            "assert shouted == 'HELLO, BO!', shouted\n"
            "assert run('--name', 'Bo') == 'Hello, Bo!'\n",
        ),
    )


def oracle_shout(_root: Path) -> list[dict[str, object]]:
    todo = [
        {"content": "Add --shout to cli.py", "status": "in_progress"},
        {"content": "Document --shout in README.md", "status": "pending"},
        {"content": "Run it", "status": "pending"},
    ]
    done = [dict(item, status="completed") for item in todo]
    return [
        tool("todowrite", todos=todo),
        {"tool_calls": [
            {"name": "read", "input": {"file_path": "cli.py"}},
            {"name": "read", "input": {"file_path": "README.md"}},
        ]},
        {"tool_calls": [{"name": "apply_patch", "input": {"patch": (
            "*** Begin Patch\n*** Update File: cli.py\n"
            "@@\n     parser.add_argument(\"--name\", default=\"world\")\n"
            "+    parser.add_argument(\"--shout\", action=\"store_true\", help=\"upper case\")\n"
            "     args = parser.parse_args(argv)\n"
            "-    print(greeting(args.name))\n"
            "+    text = greeting(args.name)\n"
            "+    print(text.upper() if args.shout else text)\n"
            "*** Update File: README.md\n"
            "@@\n-Usage: `python3 cli.py [--name NAME]`\n"
            "+Usage: `python3 cli.py [--name NAME] [--shout]`\n"
            "+\n+`--shout` prints the greeting in upper case.\n"
            "*** End Patch"
        )}}]},
        tool("bash", command="python3 cli.py --name Bo --shout", description="Try the flag"),
        tool("todowrite", todos=done),
        say("Added `--shout` (`cli.py:11`) and documented it in `README.md:3`; "
            "`python3 cli.py --name Bo --shout` prints `HELLO, BO!`."),
    ]  # fmt: skip


TASKS = [
    Task(
        name="feature-cli-flag",
        category="small feature",
        prompt="Add a --shout flag to cli.py that prints the greeting in upper case, and "
        "document it in the README.",
        files={"cli.py": CLI, "README.md": README},
        check=check_shout,
        oracle=oracle_shout,
    ),
]
