"""The list, glob and grep tools against real files and the real rg in a temporary workspace."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from pydantic import BaseModel

from lsp_agent.core.tool_details import SearchDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.glob import GlobParams, GlobTool
from lsp_agent.tools.grep import GrepParams, GrepTool
from lsp_agent.tools.list import ListParams, ListTool

SECRET = "TOP-SECRET-CONTENT"


@pytest.fixture
def outside_named(outside: Path) -> Path:
    """The shared ``outside`` folder plus ``secret-name.txt``, a name no search may show."""
    (outside / "secret-name.txt").write_text(f"{SECRET}\n")
    return outside


@pytest.fixture
def spill(ws: Path) -> Path:
    folder = ws.parent / "data" / "tool-output" / "ses_1"
    folder.mkdir(parents=True)
    (folder / "call_0.txt").write_text("spilled needle output\n")
    return folder


async def glob(
    ws: Path, pattern: str, path: str | None = None, *, extra_roots: tuple[str, ...] = ()
) -> ToolOutcome:
    ctx = tool_context(ws, extra_roots=extra_roots)
    return await GlobTool().run(GlobParams(pattern=pattern, path=path), ctx)


async def grep(
    ws: Path,
    pattern: str,
    path: str | None = None,
    include: str | None = None,
    *,
    extra_roots: tuple[str, ...] = (),
) -> ToolOutcome:
    params = GrepParams(pattern=pattern, path=path, include=include)
    return await GrepTool().run(params, tool_context(ws, extra_roots=extra_roots))


async def list_(
    ws: Path,
    path: str | None = None,
    ignore: list[str] | None = None,
    *,
    extra_roots: tuple[str, ...] = (),
) -> ToolOutcome:
    ctx = tool_context(ws, extra_roots=extra_roots)
    return await ListTool().run(ListParams(path=path, ignore=ignore), ctx)


def write(path: Path, text: str = "x\n", mtime: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


# --- glob ---------------------------------------------------------------------------------


async def test_glob_finds_files_at_any_depth_as_workspace_relative_paths(ws: Path) -> None:
    write(ws / "a.py", mtime=1000)
    write(ws / "src" / "pkg" / "b.py", mtime=2000)
    write(ws / "src" / "notes.md")

    outcome = await glob(ws, "*.py")

    assert not outcome.is_error
    assert outcome.output == "src/pkg/b.py\na.py"
    assert outcome.title == "*.py"
    assert outcome.details == SearchDetails(count=2, truncated=False)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("**/*.py", ["src/pkg/b.py", "src/a.py", "top.py"]),
        ("src/*.py", ["src/a.py"]),
        ("src/**/*.py", ["src/pkg/b.py", "src/a.py"]),
        ("/top.py", ["top.py"]),
        ("*.{py,md}", ["src/pkg/b.py", "src/a.py", "top.py", "README.md"]),
        ("src/**", ["src/pkg/b.py", "src/a.py"]),
    ],
)
async def test_glob_patterns(ws: Path, pattern: str, expected: list[str]) -> None:
    write(ws / "README.md", mtime=1000)
    write(ws / "top.py", mtime=2000)
    write(ws / "src" / "a.py", mtime=3000)
    write(ws / "src" / "pkg" / "b.py", mtime=4000)

    outcome = await glob(ws, pattern)

    assert outcome.output.splitlines() == expected


async def test_glob_in_a_sub_folder_matches_relative_to_it(ws: Path) -> None:
    write(ws / "src" / "a.py")
    write(ws / "src" / "src" / "b.py")
    write(ws / "other" / "a.py")

    outcome = await glob(ws, "src/*.py", path="src")

    assert outcome.output == "src/src/b.py"


async def test_glob_newest_first(ws: Path) -> None:
    for n, mtime in enumerate([3000, 1000, 5000, 2000, 4000]):
        write(ws / f"f{n}.txt", mtime=mtime)

    outcome = await glob(ws, "*.txt")

    assert outcome.output.splitlines() == ["f2.txt", "f4.txt", "f0.txt", "f3.txt", "f1.txt"]


async def test_glob_shows_at_most_100_files_then_a_note(ws: Path) -> None:
    for n in range(150):
        write(ws / "many" / f"f{n:03}.txt", mtime=10_000 + n)

    outcome = await glob(ws, "*.txt")

    body, note = outcome.output.split("\n\n")
    assert body.splitlines() == [f"many/f{n:03}.txt" for n in range(149, 49, -1)]
    assert note == (
        "(Results are truncated: showing first 100 results. "
        "Consider using a more specific path or pattern.)"
    )
    assert outcome.details == SearchDetails(count=100, truncated=True)


async def test_glob_without_matches(ws: Path) -> None:
    write(ws / "a.py")

    outcome = await glob(ws, "*.rs")

    assert not outcome.is_error
    assert outcome.output == "No files found"
    assert outcome.details == SearchDetails(count=0, truncated=False)


async def test_glob_refuses_a_file_and_a_missing_folder(ws: Path) -> None:
    write(ws / "a.py")

    on_file = await glob(ws, "*", path="a.py")
    missing = await glob(ws, "*", path="nope")

    assert on_file.is_error
    assert on_file.output == f"Not a directory: {ws / 'a.py'}"
    assert missing.is_error
    assert missing.output == f"No such file or directory: {ws / 'nope'}"


# --- grep ---------------------------------------------------------------------------------


async def test_grep_groups_matches_by_file_newest_file_first(ws: Path) -> None:
    write(ws / "old.py", "needle = 1\nother\nneedle()\n", mtime=1000)
    write(ws / "src" / "new.py", "x\nprint(needle)\n", mtime=2000)
    write(ws / "none.py", "nothing here\n", mtime=3000)

    outcome = await grep(ws, "needle")

    assert not outcome.is_error
    assert outcome.output == (
        "Found 3 matches\n\n"
        "src/new.py:\n  Line 2: print(needle)\n\n"
        "old.py:\n  Line 1: needle = 1\n  Line 3: needle()"
    )
    assert outcome.title == "needle"
    assert outcome.details == SearchDetails(count=3, truncated=False)


async def test_grep_pattern_is_a_regex(ws: Path) -> None:
    write(ws / "a.py", "def foo(x):\ndef bar():\nfoo = 1\n")

    outcome = await grep(ws, r"def \w+\(")

    assert outcome.output == "Found 2 matches\n\na.py:\n  Line 1: def foo(x):\n  Line 2: def bar():"


async def test_grep_shows_at_most_100_matches_then_a_note(ws: Path) -> None:
    write(ws / "a.txt", "".join(f"hit {n}\n" for n in range(1, 151)))

    outcome = await grep(ws, "hit")

    lines = outcome.output.split("\n")
    assert lines[0] == "Found 150 matches (showing the first 100)"
    assert lines[2] == "a.txt:"
    assert lines[3:103] == [f"  Line {n}: hit {n}" for n in range(1, 101)]
    assert lines[103:] == [
        "",
        "(Results truncated. Consider using a more specific path or pattern.)",
    ]
    assert outcome.details == SearchDetails(count=150, truncated=True)


async def test_grep_stops_rg_once_it_has_enough(ws: Path) -> None:
    write(ws / "a.txt", "hit\n" * 5000)

    outcome = await grep(ws, "hit")

    assert outcome.output.startswith("Found at least 1000 matches (showing the first 100)\n")
    assert outcome.details == SearchDetails(count=1000, truncated=True)


async def test_grep_include_filters_files(ws: Path) -> None:
    write(ws / "a.py", "needle\n")
    write(ws / "b.ts", "needle\n")
    write(ws / "src" / "c.py", "needle\n")
    write(ws / "src" / "d.tsx", "needle\n")

    only_py = await grep(ws, "needle", include="*.py")
    braces = await grep(ws, "needle", include="*.{ts,tsx}")
    with_path = await grep(ws, "needle", include="src/*.py")

    assert sorted(only_py.output.splitlines()[2::3]) == ["a.py:", "src/c.py:"]
    assert sorted(braces.output.splitlines()[2::3]) == ["b.ts:", "src/d.tsx:"]
    assert with_path.output.splitlines()[2::3] == ["src/c.py:"]


async def test_grep_a_single_file(ws: Path) -> None:
    write(ws / "a.py", "needle\n")
    write(ws / "b.py", "needle\n")

    outcome = await grep(ws, "needle", path="a.py")

    assert outcome.output == "Found 1 match\n\na.py:\n  Line 1: needle"


async def test_grep_without_matches(ws: Path) -> None:
    write(ws / "a.py", "hello\n")

    outcome = await grep(ws, "absent")

    assert not outcome.is_error
    assert outcome.output == "No files found"
    assert outcome.details == SearchDetails(count=0, truncated=False)


async def test_grep_invalid_regex_is_an_error_with_rgs_message(ws: Path) -> None:
    write(ws / "a.py", "foo(\n")

    outcome = await grep(ws, "foo(")

    assert outcome.is_error
    assert "regex parse error" in outcome.output
    assert "unclosed group" in outcome.output


async def test_grep_cuts_long_lines_and_skips_binary_files(ws: Path) -> None:
    write(ws / "min.js", "a" * 5000 + "needle" + "b" * 100_000 + "\n")
    (ws / "blob.bin").write_bytes(b"needle\x00\x01\x02")

    outcome = await grep(ws, "needle")

    assert outcome.output == f"Found 1 match\n\nmin.js:\n  Line 1: {'a' * 2000}..."


async def test_grep_a_missing_path(ws: Path) -> None:
    outcome = await grep(ws, "x", path="nope")

    assert outcome.is_error
    assert outcome.output == f"No such file or directory: {ws / 'nope'}"


# --- list ---------------------------------------------------------------------------------


async def test_list_renders_a_tree_folders_first(ws: Path) -> None:
    write(ws / "README.md")
    write(ws / "src" / "pkg" / "mod.py")
    write(ws / "src" / "main.py")
    write(ws / ".github" / "ci.yml")
    write(ws / "node_modules" / "dep" / "index.js")
    write(ws / "src" / "__pycache__" / "main.cpython-311.pyc")
    write(ws / "build" / "out.o")

    outcome = await list_(ws)

    assert not outcome.is_error
    assert outcome.output == (
        f"{ws}/\n  .github/\n    ci.yml\n  src/\n    pkg/\n      mod.py\n    main.py\n  README.md"
    )
    assert outcome.title == "."
    assert outcome.details == SearchDetails(count=4, truncated=False, path=str(ws))


async def test_list_a_sub_folder_with_ignore_globs(ws: Path) -> None:
    write(ws / "src" / "a.py")
    write(ws / "src" / "a.log")
    write(ws / "src" / "tests" / "t.py")
    write(ws / "src" / "keep" / "k.py")

    outcome = await list_(ws, path="src", ignore=["*.log", "tests/"])

    assert outcome.output == f"{ws}/src/\n  keep/\n    k.py\n  a.py"
    assert outcome.title == "src"


async def test_list_shows_the_shallowest_100_files_then_a_note(ws: Path) -> None:
    for n in range(60):
        write(ws / f"top{n:02}.txt")
        write(ws / "deep" / f"d{n:02}.txt")

    outcome = await list_(ws)

    body, note = outcome.output.split("\n\n")
    lines = body.splitlines()
    assert lines[1:3] == ["  deep/", "    d00.txt"]
    assert lines[-1] == "  top59.txt"
    assert sum(line.startswith("  top") for line in lines) == 60
    assert sum(line.startswith("    d") for line in lines) == 40
    assert note.startswith("(Results are truncated: showing 100 files.")
    assert outcome.details.truncated is True


async def test_list_refuses_a_file_and_reports_an_empty_folder(ws: Path) -> None:
    write(ws / "a.py")
    (ws / "empty").mkdir()

    on_file = await list_(ws, path="a.py")
    empty = await list_(ws, path="empty")

    assert on_file.is_error
    assert on_file.output == f"Not a directory: {ws / 'a.py'}"
    assert not empty.is_error
    assert empty.output == f"{ws}/empty/\nNo files found"


async def test_list_reports_an_invalid_ignore_glob(ws: Path) -> None:
    write(ws / "a.py")

    outcome = await list_(ws, ignore=["{unclosed"])

    assert outcome.is_error
    assert "unclosed alternate group" in outcome.output


# --- what every search leaves out ---------------------------------------------------------


@pytest.mark.parametrize("with_git", [False, True])
async def test_gitignore_is_respected_with_and_without_git(ws: Path, with_git: bool) -> None:
    if with_git:
        git_init(ws)
    write(ws / ".gitignore", "*.log\ngenerated/\n")
    write(ws / "app.py", "needle\n")
    write(ws / "debug.log", "needle\n")
    write(ws / "generated" / "gen.py", "needle\n")

    globbed = await glob(ws, "*.log")
    globbed_py = await glob(ws, "**/*.py")
    grepped = await grep(ws, "needle")
    grepped_log = await grep(ws, "needle", include="*.log")
    listed = await list_(ws)

    assert globbed.output == "No files found"
    assert globbed_py.output == "app.py"
    assert grepped.output == "Found 1 match\n\napp.py:\n  Line 1: needle"
    assert grepped_log.output == "No files found"
    assert listed.output == f"{ws}/\n  .gitignore\n  app.py"


async def test_ignore_files_above_a_repository_do_not_apply(ws: Path) -> None:
    git_init(ws)
    write(ws.parent / ".gitignore", "*.py\n")
    write(ws / "a.py", "needle\n")

    globbed = await glob(ws, "*.py")
    grepped = await grep(ws, "needle", path="a.py")

    assert globbed.output == "a.py"
    assert grepped.details.count == 1


async def test_undecodable_bytes_are_shown_as_replacement_characters(ws: Path) -> None:
    (ws / "caf\xe9.txt".encode("latin-1").decode("utf-8", "surrogateescape")).write_bytes(
        b"caf\xe9 needle\n"
    )

    globbed = await glob(ws, "*.txt")
    grepped = await grep(ws, "needle")
    listed = await list_(ws)

    assert globbed.output == "caf\ufffd.txt"
    assert grepped.output == "Found 1 match\n\ncaf\ufffd.txt:\n  Line 1: caf\ufffd needle"
    assert listed.output == f"{ws}/\n  caf\ufffd.txt"


async def test_dot_git_contents_are_never_shown(ws: Path) -> None:
    git_init(ws)
    write(ws / "a.py", "core\n")

    globbed = await glob(ws, "**")
    config = await glob(ws, "config")
    grepped = await grep(ws, r"\[core\]")
    listed = await list_(ws)

    assert globbed.output == "a.py"
    assert config.output == "No files found"
    assert grepped.output == "No files found"
    assert ".git/" not in listed.output
    assert listed.output == f"{ws}/\n  a.py"


async def test_dotfiles_other_than_git_are_visible(ws: Path) -> None:
    write(ws / ".env.example", "needle\n")
    write(ws / ".github" / "ci.yml", "needle\n")

    globbed = await glob(ws, "*")
    grepped = await grep(ws, "needle")

    assert sorted(globbed.output.splitlines()) == [".env.example", ".github/ci.yml"]
    assert grepped.details.count == 2


ESCAPES = ["../outside", "OUTSIDE", "/", "link"]


async def run_all(ws: Path, path: str) -> list[ToolOutcome]:
    return [
        await glob(ws, "*", path=path),
        await grep(ws, SECRET, path=path),
        await list_(ws, path=path),
    ]


@pytest.mark.parametrize("escape", ESCAPES)
async def test_paths_outside_the_workspace_are_refused(
    ws: Path, outside_named: Path, escape: str
) -> None:
    (ws / "link").symlink_to(outside_named)
    path = str(outside_named) if escape == "OUTSIDE" else escape

    outcomes = await run_all(ws, path)

    for outcome in outcomes:
        assert outcome.is_error
        assert "is outside the workspace" in outcome.output
        assert "external_directory" in outcome.output
        assert outcome.details.outside is True
        assert SECRET not in outcome.output
        assert "secret-name" not in outcome.output


async def test_searches_skip_symlinks_that_leave_the_workspace(
    ws: Path, outside_named: Path
) -> None:
    (ws / "linked-folder").symlink_to(outside_named)
    (ws / "linked-file.txt").symlink_to(outside_named / "secret-name.txt")
    write(ws / "a.txt", "harmless\n")

    globbed = [await glob(ws, pattern) for pattern in ("*", "**/*.txt", "linked-folder/**")]
    grepped = [await grep(ws, SECRET), await grep(ws, SECRET, include="*.txt")]
    listed = await list_(ws)

    for outcome in [*globbed, *grepped, listed]:
        assert not outcome.is_error
        assert SECRET not in outcome.output
        assert "secret-name" not in outcome.output
        assert "linked" not in outcome.output
    assert globbed[0].output == "a.txt"
    assert grepped[0].output == "No files found"


# --- the spill folder ---------------------------------------------------------------------


async def test_grep_may_search_the_spill_folder(ws: Path, spill: Path) -> None:
    outcome = await grep(ws, "needle", path=str(spill), extra_roots=(str(spill),))
    one_file = await grep(ws, "needle", path=str(spill / "call_0.txt"), extra_roots=(str(spill),))

    assert not outcome.is_error
    assert (
        outcome.output == f"Found 1 match\n\n{spill}/call_0.txt:\n  Line 1: spilled needle output"
    )
    assert one_file.output == outcome.output


async def test_glob_and_list_may_not_search_the_spill_folder(ws: Path, spill: Path) -> None:
    globbed = await glob(ws, "*", path=str(spill), extra_roots=(str(spill),))
    listed = await list_(ws, path=str(spill), extra_roots=(str(spill),))

    for outcome in (globbed, listed):
        assert outcome.is_error
        assert "is outside the workspace" in outcome.output
        assert "call_0" not in outcome.output


async def test_grep_outside_the_spill_folder_is_still_refused(
    ws: Path, spill: Path, outside: Path
) -> None:
    outcome = await grep(ws, SECRET, path=str(outside), extra_roots=(str(spill),))

    assert outcome.is_error
    assert SECRET not in outcome.output


# --- awkward names ------------------------------------------------------------------------


async def test_names_with_spaces_and_colons(ws: Path) -> None:
    write(ws / "my dir" / "a: b.txt", "one\nneedle: 2\n")

    globbed = await glob(ws, "*.txt")
    grepped = await grep(ws, "needle")
    listed = await list_(ws)

    assert globbed.output == "my dir/a: b.txt"
    assert grepped.output == "Found 1 match\n\nmy dir/a: b.txt:\n  Line 2: needle: 2"
    assert listed.output == f"{ws}/\n  my dir/\n    a: b.txt"


async def test_patterns_starting_with_a_dash_are_not_options(ws: Path) -> None:
    write(ws / "-rf.txt", "--files\n")

    grepped = await grep(ws, "--files")
    globbed = await glob(ws, "-rf*")

    assert grepped.output == "Found 1 match\n\n-rf.txt:\n  Line 1: --files"
    assert globbed.output == "-rf.txt"


def test_params_forbid_unknown_arguments() -> None:
    models: list[type[BaseModel]] = [GlobParams, GrepParams, ListParams]
    for model in models:
        with pytest.raises(ValueError, match="Extra inputs"):
            model.model_validate({"pattern": "x", "bogus": 1})
