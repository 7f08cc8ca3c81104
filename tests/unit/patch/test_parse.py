"""The apply_patch parser: every section kind, the leniencies, and errors naming their line."""

from __future__ import annotations

import pytest

from lsp_agent.patch.parse import (
    AddFile,
    DeleteFile,
    Hunk,
    HunkLine,
    PatchFormatError,
    UpdateFile,
    parse_patch,
)


def envelope(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def only_update(text: str) -> UpdateFile:
    (operation,) = parse_patch(text).operations
    assert isinstance(operation, UpdateFile)
    return operation


def error_of(text: str) -> PatchFormatError:
    with pytest.raises(PatchFormatError) as info:
        parse_patch(text)
    return info.value


def test_add_delete_and_update_in_one_patch() -> None:
    patch = parse_patch(
        envelope(
            "*** Add File: new.txt",
            "+first",
            "+",
            "+third",
            "*** Delete File: old.txt",
            "*** Update File: src/app.py",
            "@@",
            " keep",
            "-before",
            "+after",
        )
    )

    add, delete, update = patch.operations
    assert add == AddFile(path="new.txt", lines=("first", "", "third"), line=2)
    assert add.content == "first\n\nthird\n"
    assert delete == DeleteFile(path="old.txt", line=6)
    assert update == UpdateFile(
        path="src/app.py",
        move_to=None,
        hunks=(
            Hunk(
                contexts=(),
                lines=(
                    HunkLine(kind=" ", text="keep"),
                    HunkLine(kind="-", text="before"),
                    HunkLine(kind="+", text="after"),
                ),
                end_of_file=False,
                line=8,
            ),
        ),
        line=7,
    )
    assert update.hunks[0].old_lines == ["keep", "before"]
    assert update.hunks[0].new_lines == ["keep", "after"]


def test_an_added_empty_file_has_no_lines() -> None:
    (add,) = parse_patch(envelope("*** Add File: empty.txt")).operations
    assert isinstance(add, AddFile)
    assert add.content == ""


def test_move_to_follows_the_update_line() -> None:
    update = only_update(
        envelope("*** Update File: a.py", "*** Move to: pkg/b.py", "@@", "-x", "+y")
    )
    assert update.path == "a.py"
    assert update.move_to == "pkg/b.py"
    assert len(update.hunks) == 1


def test_a_pure_rename_needs_no_hunk() -> None:
    update = only_update(envelope("*** Update File: a.py", "*** Move to: b.py"))
    assert update.move_to == "b.py"
    assert update.hunks == ()


def test_context_after_at_at_and_several_hunks() -> None:
    update = only_update(
        envelope(
            "*** Update File: a.py",
            "@@ class A:",
            "@@ def f(self):",
            "-    return 1",
            "+    return 2",
            "@@ -40,3 +40,3 @@ def g():",
            "-    pass",
            "+    return 3",
            "@@ -50 +50 @@",
            "+tail",
        )
    )
    first, second, third = update.hunks
    assert first.contexts == ("class A:", "def f(self):")
    assert first.line == 3
    assert second.contexts == ("def g():",)
    assert second.line == 7
    assert third.contexts == ()
    assert third.additions == 1
    assert third.deletions == 0


def test_the_first_hunk_may_leave_out_its_at_at_line() -> None:
    update = only_update(envelope("*** Update File: a.py", " keep", "-old", "+new"))
    assert update.hunks[0].old_lines == ["keep", "old"]
    assert update.hunks[0].line == 3


def test_end_of_file_marks_the_hunk() -> None:
    update = only_update(
        envelope(
            "*** Update File: a.py",
            "@@",
            " last",
            "+appended",
            "*** End of File",
            "@@",
            "-other",
        )
    )
    assert [h.end_of_file for h in update.hunks] == [True, False]


def test_an_empty_line_inside_a_hunk_is_an_empty_context_line() -> None:
    update = only_update(
        envelope("*** Update File: a.py", "@@", " def f():", "", "-    pass", "+    return 1")
    )
    assert update.hunks[0].old_lines == ["def f():", "", "    pass"]


def test_empty_lines_before_the_next_section_belong_to_none() -> None:
    patch = parse_patch(
        envelope(
            "",
            "*** Update File: a.py",
            "@@",
            "-x",
            "+y",
            "",
            "",
            "*** Add File: b.txt",
            "+b",
            "",
        )
    )
    update, add = patch.operations
    assert isinstance(update, UpdateFile)
    assert update.hunks[0].old_lines == ["x"]
    assert isinstance(add, AddFile)
    assert add.lines == ("b",)


@pytest.mark.parametrize(
    "opener", ["cat <<'EOF'", 'cat <<"EOF"', "cat <<EOF", "<<'EOF'", "apply_patch <<'PATCH'"]
)
def test_a_heredoc_wrapper_is_stripped(opener: str) -> None:
    closer = "PATCH" if "PATCH" in opener else "EOF"
    text = "\n".join([opener, envelope("*** Delete File: gone.txt").rstrip(), closer])
    (delete,) = parse_patch(text).operations
    assert delete == DeleteFile(path="gone.txt", line=3)


def test_a_markdown_fence_is_stripped() -> None:
    text = "```diff\n" + envelope("*** Delete File: gone.txt") + "```\n"
    (delete,) = parse_patch(text).operations
    assert isinstance(delete, DeleteFile)


def test_crlf_patch_text_and_indented_markers() -> None:
    text = "  *** Begin Patch\r\n*** Add File: a.txt\r\n+one\r\n*** End Patch  \r\n"
    (add,) = parse_patch(text).operations
    assert isinstance(add, AddFile)
    assert add.lines == ("one",)


def test_paths_are_trimmed() -> None:
    (delete,) = parse_patch(envelope("*** Delete File:   spaced name.txt  ")).operations
    assert isinstance(delete, DeleteFile)
    assert delete.path == "spaced name.txt"


# --- malformed patches ------------------------------------------------------------------


def test_missing_begin_marker_names_the_first_line() -> None:
    error = error_of("\n\n*** Add File: a.txt\n+x\n*** End Patch\n")
    assert error.line == 3
    assert str(error).startswith("Invalid patch at line 3: the patch must start with")


def test_missing_end_marker_names_the_last_line() -> None:
    error = error_of("*** Begin Patch\n*** Add File: a.txt\n+x\n")
    assert error.line == 3
    assert "must end with '*** End Patch'" in str(error)


@pytest.mark.parametrize("text", ["", "   \n", "*** Begin Patch\n*** End Patch\n"])
def test_an_empty_patch_is_rejected(text: str) -> None:
    assert "empty patch" in str(error_of(text))


def test_line_numbers_count_the_heredoc_lines() -> None:
    error = error_of("cat <<'EOF'\n*** Begin Patch\nnonsense\n*** End Patch\nEOF\n")
    assert error.line == 3
    assert "expected a file section" in str(error)
    assert "'nonsense'" in str(error)


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        (["*** Frobnicate File: a"], 2, "expected a file section"),
        (["*** Add File:   "], 2, "needs a path"),
        (["*** Add File: a.txt", "+ok", "missing plus"], 4, "starts with '+'"),
        (["*** Delete File: a.txt", "+x"], 3, "takes no lines"),
        (["*** Update File: a.py"], 2, "has no hunks"),
        (["*** Update File: a.py", "*** Move to:", "@@", "-x"], 3, "needs a path"),
        (["*** Update File: a.py", "@@", "-x", "*** Move to: b.py"], 5, "right after"),
        (["*** Update File: a.py", "@@", "-x", "oops"], 5, "a hunk line starts with"),
        (["*** Update File: a.py", "@@ ctx", "*** Delete File: b"], 3, "at least one line"),
        (["*** Update File: a.py", "@@", "*** End of File"], 4, "must follow the lines"),
        (["*** Update File: a.py", "@@", "-x", "*** End of File", "-y"], 6, "must start"),
        (["*** Update File: a.py", "@@", "-x", "*** End Patch", "-y"], 5, "unexpected"),
    ],
)
def test_malformed_sections_name_their_line(lines: list[str], line: int, words: str) -> None:
    error = error_of(envelope(*lines))
    assert error.line == line
    assert words in str(error)
    assert str(error).startswith(f"Invalid patch at line {line}: ")
