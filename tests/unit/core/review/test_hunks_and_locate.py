"""Hunks from two texts, and finding them again in a text that changed since."""

from __future__ import annotations

from lsp_agent.core.review.hunks import diff_hunks, split_lines
from lsp_agent.core.review.locate import Span, map_spans

OLD = "".join(f"l{n}\n" for n in range(10))


def test_two_distant_changes_are_two_hunks_in_file_order() -> None:
    new = OLD.replace("l1\n", "L1\n").replace("l8\n", "L8\nextra\n")
    hunks = diff_hunks(OLD, new)
    assert [(h.old_start, h.old_lines, h.new_lines) for h in hunks] == [
        (1, ("l1\n",), ("L1\n",)),
        (8, ("l8\n",), ("L8\n", "extra\n")),
    ]


def test_a_created_and_a_deleted_file_are_one_whole_hunk_each() -> None:
    [created] = diff_hunks(None, "a\nb")
    assert (created.kind, created.old_lines, created.new_lines) == ("created", (), ("a\n", "b"))
    [deleted] = diff_hunks("a\n", None)
    assert (deleted.kind, deleted.new_lines) == ("deleted", ())
    assert diff_hunks(OLD, OLD) == []


def test_a_hunk_is_found_below_lines_added_above_it_and_lost_when_its_text_changed() -> None:
    after = split_lines(OLD.replace("l5\n", "L5\n"))
    span = Span(start=5, count=1)
    shifted = ["new\n", "lines\n", *after]
    assert map_spans(after, shifted, [span]) == [Span(start=7, count=1)]
    changed = [*after[:5], "user's\n", *after[6:]]
    assert map_spans(after, changed, [span]) == [None]
