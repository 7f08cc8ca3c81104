"""The pieces of next-edit suggestions: the edit history a typing session leaves, and the
model's answer parsed defensively (a malformed answer, a range outside the document or an edit
that changes nothing is dropped; a good one is narrowed to what differs)."""

from __future__ import annotations

from lsp_agent.completion.history import Edit, EditHistory
from lsp_agent.completion.next_edit import numbered, parse_answer, to_suggestion_span

TEXT = "def load(uid):\n    return db.get(uid)\n"


def test_typing_on_one_line_is_one_edit_of_whole_lines() -> None:
    history = EditHistory()
    history.opened("u", TEXT)
    renamed = TEXT
    for typed in ("u", "us", "use", "user_id"):
        renamed = TEXT.replace("load(uid)", f"load({typed})")
        history.changed("u", renamed)
    history.changed("u", renamed + "x = 1\n")
    assert history.edits("u") == [
        Edit(line=0, old="def load(uid):", new="def load(user_id):"),
        Edit(line=2, old="", new="x = 1\n"),
    ]
    history.closed("u")
    assert history.edits("u") == []


def test_a_well_formed_answer_becomes_the_narrowest_edit() -> None:
    answer = "EDIT 2-2\n    return db.get(user_id)\nEND\nREASON: rename uid → user_id\n"
    parsed = parse_answer(answer)
    assert parsed is not None
    assert parsed.reason == "rename uid → user_id"
    span = to_suggestion_span(TEXT, parsed)
    assert span == ((1, 18), (1, 21), "user_id", "uid")


def test_fenced_answers_are_read_too() -> None:
    parsed = parse_answer("```\nEDIT 1-1\ndef load(user_id):\nEND\n```")
    assert parsed is not None
    assert to_suggestion_span(TEXT, parsed) == ((0, 9), (0, 12), "user_id", "uid")


def test_malformed_out_of_range_and_no_op_answers_are_dropped() -> None:
    assert parse_answer("NONE") is None
    assert parse_answer("Sure! I would rename uid on line 2.") is None
    assert parse_answer("EDIT 3-2\nx\nEND") is None  # backwards
    assert parse_answer("EDIT 0-1\nx\nEND") is None  # lines start at 1
    beyond = parse_answer("EDIT 7-9\nx = 1\nEND")
    assert beyond is not None
    assert to_suggestion_span(TEXT, beyond) is None
    same = parse_answer("EDIT 1-1\ndef load(uid):\nEND")
    assert same is not None
    assert to_suggestion_span(TEXT, same) is None


def test_the_file_is_shown_numbered_and_around_the_cursor_when_long() -> None:
    assert numbered(TEXT, 0).splitlines()[:2] == [
        "    1| def load(uid):",
        "    2|     return db.get(uid)",
    ]
    long = "".join(f"line {n}\n" for n in range(5000))
    shown = numbered(long, 2500, budget=2000)
    assert " 2501| line 2500" in shown
    assert "    1| line 0" not in shown
