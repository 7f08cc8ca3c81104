"""The matcher chain behind ``edit``: each matcher alone, then the chain's rules."""

from __future__ import annotations

import pytest

from lsp_agent.patch.edit_match import (
    MATCHERS,
    EditFailure,
    EditPlan,
    Matcher,
    ambiguous_message,
    block_anchor,
    context_aware,
    escape_normalized,
    exact,
    indentation_flexible,
    levenshtein,
    line_trimmed,
    plan_edit,
    similarity,
    trimmed_boundary,
    whitespace_normalized,
)

NOT_FOUND = (
    "Could not find old_string in the file. It must match exactly, including whitespace, "
    "indentation and line endings. Read the file again and copy the exact text."
)


def found(matcher: Matcher, content: str, old: str, new: str) -> list[tuple[str, str]]:
    """(matched text, replacement) for every place ``matcher`` finds."""
    return [(content[m.start : m.end], m.replacement) for m in matcher(content, old, new)]


def edited(content: str, old: str, new: str, *, replace_all: bool = False) -> str:
    plan = plan_edit(content, old, new, replace_all=replace_all)
    assert isinstance(plan, EditPlan), plan
    return plan.apply(content)


def failure(content: str, old: str, new: str, *, replace_all: bool = False) -> str:
    plan = plan_edit(content, old, new, replace_all=replace_all)
    assert isinstance(plan, EditFailure), plan
    return plan.message


@pytest.mark.parametrize(
    ("matcher", "content", "old", "new", "expected"),
    [
        pytest.param(exact, "a = 1\nb = 2\n", "b = 2", "b = 3", [("b = 2", "b = 3")], id="exact"),
        pytest.param(
            line_trimmed,
            "def f():\n    return 1\n",
            "return 1  ",
            "return 2",
            [("    return 1", "    return 2")],
            id="line_trimmed-reindents",
        ),
        pytest.param(
            block_anchor,
            "def f(x):\n    total = x + 1\n    return total\n",
            "def f(x):\n    total = x + 2\n    return total",
            "def f(x):\n    return x",
            [("def f(x):\n    total = x + 1\n    return total", "def f(x):\n    return x")],
            id="block_anchor",
        ),
        pytest.param(
            block_anchor,
            "if a:\n    if b:\n        go()\n    }\n}\nrest\n",
            "if a:\n    if b:\n        go(1)\n    }\n}",
            "N",
            [("if a:\n    if b:\n        go()\n    }\n}", "N")],
            id="block_anchor-not-only-the-first-closing-anchor",
        ),
        pytest.param(
            whitespace_normalized,
            "x  =   compute( a,  b )\n",
            "x = compute( a, b )",
            "x = compute(a)",
            [("x  =   compute( a,  b )", "x = compute(a)")],
            id="whitespace_normalized",
        ),
        pytest.param(
            indentation_flexible,
            "class A:\n    def f(self):\n        return 1\n",
            "def f(self):\n    return 1",
            "def f(self):\n    return 2",
            [
                (
                    "    def f(self):\n        return 1",
                    "    def f(self):\n        return 2",
                )
            ],
            id="indentation_flexible-reindents",
        ),
        pytest.param(
            escape_normalized,
            'print("hi")\nprint("there")\n',
            'print(\\"hi\\")\\nprint(\\"there\\")',
            'print(\\"bye\\")',
            [('print("hi")\nprint("there")', 'print("bye")')],
            id="escape_normalized",
        ),
        pytest.param(
            trimmed_boundary,
            "alpha beta\n",
            "  alpha beta  ",
            "  gamma  ",
            [("alpha beta", "gamma")],
            id="trimmed_boundary",
        ),
        pytest.param(
            context_aware,
            "if ok:\n    step_one()\n    step_two()\nend\n",
            "if ok:\n    step_one()\n    something_else_entirely(42)\nend",
            "N",
            [("if ok:\n    step_one()\n    step_two()\nend", "N")],
            id="context_aware-half-the-middle",
        ),
    ],
)
def test_each_matcher_accepts_its_kind_of_slip(
    matcher: Matcher, content: str, old: str, new: str, expected: list[tuple[str, str]]
) -> None:
    assert found(matcher, content, old, new) == expected


@pytest.mark.parametrize(
    ("matcher", "content", "old"),
    [
        pytest.param(exact, "a = 1\n", "a  = 1", id="exact-spacing"),
        pytest.param(line_trimmed, "    return 1\n", "return 2", id="line_trimmed-other-text"),
        pytest.param(line_trimmed, "a\n\n\nb\n", "  \n", id="line_trimmed-blank-only"),
        pytest.param(
            block_anchor,
            "def f(x):\n    total = x + 1\n    return total\n",
            "def f(x):\n    print('something unrelated here')\n    return total",
            id="block_anchor-unrelated-middle",
        ),
        pytest.param(
            block_anchor,
            "start\n  one\n  two\n  three\n  four\n  five\n  six\nend\n",
            "start\n  one\n  two\nend",
            id="block_anchor-size-out-of-tolerance",
        ),
        pytest.param(block_anchor, "a\nb\n", "a\nb", id="block_anchor-under-3-lines"),
        pytest.param(
            whitespace_normalized,
            "x = compute(a, b)\n",
            "x = compute( a, b )",
            id="whitespace_normalized-other-tokens",
        ),
        pytest.param(
            indentation_flexible,
            "class A:\n    def f(self):\n        return 1\n",
            "def f(self):\nreturn 1",
            id="indentation_flexible-relative-indent-differs",
        ),
        pytest.param(
            escape_normalized, 'print("hi")\n', 'print("hi")', id="escape_normalized-no-escapes"
        ),
        pytest.param(escape_normalized, "a\nb\n", "a\\nc", id="escape_normalized-still-absent"),
        pytest.param(
            trimmed_boundary, "alpha beta\n", "alpha beta", id="trimmed_boundary-nothing-to-trim"
        ),
        pytest.param(
            context_aware,
            "if ok:\n    a()\n    b()\n    c()\nend\n",
            "if ok:\n    a()\n    x()\n    y()\nend",
            id="context_aware-under-half",
        ),
        pytest.param(
            context_aware,
            "if ok:\n    a()\n    b()\n    c()\nend\n",
            "if ok:\n    a()\n    b()\nend",
            id="context_aware-line-count-differs",
        ),
    ],
)
def test_each_matcher_refuses_what_is_not_its_kind(
    matcher: Matcher, content: str, old: str
) -> None:
    assert found(matcher, content, old, "NEW") == []


def test_the_chain_runs_in_the_documented_order() -> None:
    assert [name for name, _matcher in MATCHERS] == [
        "exact",
        "line_trimmed",
        "block_anchor",
        "whitespace_normalized",
        "indentation_flexible",
        "escape_normalized",
        "trimmed_boundary",
        "context_aware",
    ]


def test_an_exact_unique_match_is_replaced() -> None:
    plan = plan_edit("a = 1\nb = 2\n", "b = 2", "b = 3")

    assert isinstance(plan, EditPlan)
    assert plan.matcher == "exact"
    assert plan.apply("a = 1\nb = 2\n") == "a = 1\nb = 3\n"


def test_several_exact_occurrences_are_ambiguous_and_no_looser_matcher_picks_one() -> None:
    assert failure("x = 1\nx = 1\n", "x = 1", "x = 2") == ambiguous_message(2)
    assert ambiguous_message(2) == (
        "Found 2 matches for old_string. Provide more surrounding lines to make it unique, "
        "or set replace_all to true."
    )


def test_overlapping_exact_occurrences_count_as_ambiguous() -> None:
    assert failure("aaa", "aa", "b") == ambiguous_message(2)
    assert edited("aaa", "aa", "b", replace_all=True) == "ba"


def test_a_later_stricter_matcher_can_settle_a_fuzzy_ambiguity() -> None:
    # line_trimmed finds both blocks (same nesting); only the first has the same relative
    # indentation, which is what indentation_flexible asks for.
    content = "    a = 1\n      b = 2\nand\n    a = 1\n        b = 2\n"

    plan = plan_edit(content, "a = 1\n  b = 2", "a = 10\n  b = 2")

    assert isinstance(plan, EditPlan)
    assert plan.matcher == "indentation_flexible"
    assert plan.apply(content) == "    a = 10\n      b = 2\nand\n    a = 1\n        b = 2\n"


def test_line_trimmed_refuses_a_block_whose_nesting_differs() -> None:
    assert line_trimmed("    a = 1\n    b = 2\n", "a = 1\n  b = 2", "x") == []


def test_a_fuzzy_ambiguity_nothing_settles_is_reported_with_its_count() -> None:
    content = "  x()\nmid\n    x()\nend\n"

    assert failure(content, "x()  ", "y()") == ambiguous_message(2)


def test_replace_all_replaces_every_exact_occurrence() -> None:
    plan = plan_edit("foo(1); foo(2); foo(3)", "foo", "bar", replace_all=True)

    assert isinstance(plan, EditPlan)
    assert len(plan.replacements) == 3
    assert plan.apply("foo(1); foo(2); foo(3)") == "bar(1); bar(2); bar(3)"


def test_replace_all_with_a_fuzzy_matcher_reindents_each_place() -> None:
    content = "if a:\n    x()\nif b:\n        x()\n"

    assert edited(content, "x()  ", "y()", replace_all=True) == (
        "if a:\n    y()\nif b:\n        y()\n"
    )


def test_the_size_guard_refuses_a_span_far_larger_than_old_string() -> None:
    message = failure("foo\n\n\n\n\nbar\n", "foo bar", "X")

    assert message == (
        "Refusing to edit: the closest match spans 6 lines, much more than old_string "
        "(1 line). Read the file again and give the exact text to replace."
    )


def test_the_size_guard_also_counts_characters_for_a_multi_line_old_string() -> None:
    content = "foo" + " " * 2000 + "x\nbar\n"

    message = failure(content, "foo x\nbar", "X")

    assert message.startswith("Refusing to edit: the closest match spans 2 lines")


def test_the_size_guard_lets_a_span_of_similar_size_through() -> None:
    assert edited("foo\nbar\n", "foo bar", "X") == "X\n"


def test_nothing_found_says_what_to_do_next() -> None:
    assert failure("alpha\n", "omega", "x") == NOT_FOUND


def test_line_number_prefixes_from_read_get_a_hint() -> None:
    message = failure("import os\nimport sys\n", "1: import os\n2: import sys", "x")

    assert message.startswith(NOT_FOUND)
    assert "line numbers of the read output" in message


def test_a_trailing_newline_in_old_string_takes_the_line_with_it() -> None:
    assert edited("a\n  b  \nc\n", "b\n", "") == "a\nc\n"
    assert edited("a\nb\nc\n", "  b\n", "  B\n") == "a\nB\nc\n"


def test_a_trailing_newline_at_the_end_of_a_file_without_one() -> None:
    assert edited("a\n  b", " b\n", " B\n") == "a\n  B"


def test_block_anchor_with_two_equally_good_blocks_is_ambiguous() -> None:
    block = "start\n    first()\n    second()\nend\n"

    assert failure(block + block, "start\n    first()\n    secnd()\nend", "X") == (
        ambiguous_message(2)
    )


def test_block_anchor_prefers_a_clearly_better_block() -> None:
    content = "start\n    first()\n    second()\nend\nstart\n    frist()\n    sceond()\nend\n"

    result = edited(content, "start\n    first()\n    secnd()\nend", "X")

    assert result == "X\nstart\n    frist()\n    sceond()\nend\n"


def test_escape_normalized_keeps_new_string_with_real_newlines_as_written() -> None:
    content = 'msg = "a"\nnext\n'

    assert edited(content, 'msg = \\"a\\"\\nnext', 'msg = "b\\n"\nnext') == 'msg = "b\\n"\nnext\n'


def test_whitespace_normalized_keeps_the_indentation_outside_the_span() -> None:
    assert edited("    foo  =  1\n", "    foo = 1", "    foo = 2") == "    foo = 2\n"


def test_line_trimmed_skips_a_block_without_an_indentation_map() -> None:
    # old's "" stands for both "  " and "        " in the file: no map, no line_trimmed match;
    # whitespace_normalized then takes it and indents new's later lines like the file's.
    content = "  a\n        b\n"

    assert line_trimmed(content, "a\nb", "a\nc") == []
    assert edited(content, "a\nb", "a\nc") == "  a\n        c\n"


def test_new_lines_deeper_than_old_are_indented_on_the_file_s_scale() -> None:
    # old indents by 2, the file by 4: a new nesting level in new_string lands at 12.
    content = "class A:\n    def f(self):\n        return 1\n"

    result = edited(content, "def f(self):\n  return 1", "def f(self):\n  if x:\n    return 2")

    assert result == "class A:\n    def f(self):\n        if x:\n            return 2\n"


def test_a_tab_indented_file_gets_tabs() -> None:
    content = "func f() {\n\tif x {\n\t\treturn\n\t}\n}\n"

    result = edited(content, "if x {\n    return\n}", "if x {\n    log()\n        return\n}")

    assert result == "func f() {\n\tif x {\n\t\tlog()\n\t\t\treturn\n\t}\n}\n"


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("kitten", "sitting", 3), ("", "abc", 3), ("same", "same", 0), ("flaw", "lawn", 2)],
)
def test_levenshtein(a: str, b: str, distance: int) -> None:
    assert levenshtein(a, b) == distance
    assert levenshtein(b, a) == distance


def test_similarity_is_one_minus_distance_over_the_longer_length() -> None:
    assert similarity("", "") == 1.0
    assert similarity("abcd", "abcx") == 0.75
    assert similarity("abc", "xyz") == 0.0
