"""What the terminal prints about finished work: the files a run changed, a tool's output."""

from __future__ import annotations

import attrs

from lsp_agent.terminal_report import changed_files, output_tail


@attrs.frozen
class Change:
    path: str
    status: str
    additions: int
    deletions: int


def test_changed_files_has_a_total_and_one_aligned_line_per_file() -> None:
    lines = changed_files(
        [
            Change("src/calc.py", "modify", 3, 1),
            Change("new.txt", "add", 2, 0),
            Change("old\x1b[2J.txt", "delete", 0, 5),
        ]
    )

    assert lines == [
        "3 files changed (+5 -6):",
        "  src/calc.py     +3 -1",
        "  new.txt         +2 -0 (new)",
        "  old\\x1b[2J.txt  +0 -5 (deleted)",
    ]


def test_one_changed_file_and_none() -> None:
    assert changed_files([Change("a.py", "modify", 1, 1)])[0] == "1 file changed (+1 -1):"
    assert changed_files([]) == []


def test_output_tail_keeps_the_last_ten_lines_and_counts_the_rest() -> None:
    output = "\n".join(f"l{i}" for i in range(1, 13)) + "\n"

    lines = output_tail(output, "  ", more=" (more: export)")

    assert lines == ["  … 2 earlier lines (more: export)"] + [f"  l{i}" for i in range(3, 13)]


def test_output_tail_escapes_and_cuts_long_lines() -> None:
    (line,) = output_tail("\x1b]0;title\x07" + "x" * 300, "")

    assert line.startswith("\\x1b]0;title\\x07xxx")
    assert len(line) == 241
    assert line.endswith("…")


def test_output_tail_of_nothing_is_nothing() -> None:
    assert output_tail("", "  ") == []
    assert output_tail("\n", "  ") == []
