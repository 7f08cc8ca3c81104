"""Path arguments in the shapes models get wrong — the workspace folder's name in front, a
``file://`` URI — reach the file meant when that is unambiguous, and still meet the wall."""

from __future__ import annotations

from pathlib import Path

import attrs

from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.base import ToolRunContext
from lsp_agent.tools.edit import EditParams, EditTool
from lsp_agent.tools.grep import GrepParams, GrepTool
from lsp_agent.tools.read import ReadParams, ReadTool
from lsp_agent.tools.write import WriteParams, WriteTool
from lsp_agent.workspace.boundary import WorkspaceBoundary
from lsp_agent.workspace.files import FileLocks
from lsp_agent.workspace.path_shapes import meant_path


def project(ws: Path) -> Path:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x = 1\n")
    return ws


async def read(ctx: ToolRunContext, path: str) -> str:
    outcome = await ReadTool().run(ReadParams(file_path=path), ctx)
    assert not outcome.is_error, outcome.output
    return outcome.output


async def test_the_workspace_folders_name_in_front_reads_and_edits_the_file(ws: Path) -> None:
    project(ws)
    ctx = tool_context(ws)
    assert (await read(ctx, "ws/src/a.py")).startswith("1: x = 1")
    assert (await read(ctx, "./ws/src/a.py")).startswith("1: x = 1")
    done = await EditTool(FileLocks()).run(
        EditParams(file_path="ws/src/a.py", old_string="x = 1", new_string="x = 2"), ctx
    )
    assert not done.is_error, done.output
    assert (ws / "src" / "a.py").read_text() == "x = 2\n"
    assert not (ws / "ws").exists()
    found = await GrepTool().run(GrepParams(pattern="x = ", path="ws/src"), ctx)
    assert "src/a.py" in found.output
    assert "Line 1: x = 2" in found.output


async def test_a_file_uri_is_its_path(ws: Path) -> None:
    project(ws)
    (ws / "with space.py").write_text("y = 1\n")
    ctx = tool_context(ws)
    assert (await read(ctx, (ws / "src" / "a.py").as_uri())).startswith("1: x = 1")
    assert (await read(ctx, (ws / "with space.py").as_uri())).startswith("1: y = 1")


async def test_a_cited_line_after_the_path_is_dropped(ws: Path) -> None:
    project(ws)
    (ws / "odd.py:3").write_text("literal = 1\n")
    ctx = tool_context(ws)
    assert (await read(ctx, "src/a.py:12")).startswith("1: x = 1")
    assert (await read(ctx, "ws/src/a.py:12:5")).startswith("1: x = 1")
    assert (await read(ctx, f"{ws}/src/a.py:1")).startswith("1: x = 1")
    assert (await read(ctx, "odd.py:3")).startswith("1: literal = 1")  # a file of that name


async def test_a_second_workspace_folder_by_its_name(ws: Path) -> None:
    project(ws)
    other = ws.parent / "lib"
    other.mkdir()
    (other / "b.py").write_text("z = 3\n")
    ctx = tool_context(ws)
    ctx = attrs.evolve(ctx, boundary=WorkspaceBoundary([ws, other]))
    assert (await read(ctx, "lib/b.py")).startswith("1: z = 3")


async def test_a_real_folder_of_that_name_wins(ws: Path) -> None:
    project(ws)
    (ws / "ws" / "src").mkdir(parents=True)
    (ws / "ws" / "src" / "a.py").write_text("inner = 1\n")
    assert (await read(tool_context(ws), "ws/src/a.py")).startswith("1: inner = 1")


async def test_a_new_file_is_not_guessed_at(ws: Path) -> None:
    """``ws/new.py`` may mean a new ``ws`` folder: nothing names the other reading, so the
    path is taken as written."""
    project(ws)
    ctx = tool_context(ws)
    done = await WriteTool(FileLocks()).run(WriteParams(file_path="ws/new.py", content="n\n"), ctx)
    assert not done.is_error, done.output
    assert (ws / "ws" / "new.py").read_text() == "n\n"
    assert not (ws / "new.py").exists()


async def test_the_meant_path_still_meets_the_wall(ws: Path, outside: Path) -> None:
    project(ws)
    ctx = tool_context(ws)
    for path in ("ws/../outside/secret.txt", (outside / "secret.txt").as_uri()):
        outcome = await ReadTool().run(ReadParams(file_path=path), ctx)
        assert outcome.is_error
        assert "outside the workspace" in outcome.output
        assert "TOP-SECRET" not in outcome.output


def test_ambiguous_shapes_are_left_as_written(tmp_path: Path) -> None:
    one = tmp_path / "a" / "app"
    two = tmp_path / "b" / "app"
    for root in (one, two):
        (root / "src").mkdir(parents=True)
        (root / "src" / "m.py").write_text("")
    roots = [str(one), str(two)]
    assert meant_path("app/src/m.py", roots) == "app/src/m.py"  # two folders named app
    assert meant_path("app/src/m.py", roots[:1]) == str(one / "src" / "m.py")
    assert meant_path("app/missing.py", roots[:1]) == "app/missing.py"
    assert meant_path("file://host/share/x.py", roots) == "file://host/share/x.py"
    assert meant_path("/abs/app/src/m.py", roots) == "/abs/app/src/m.py"
    assert meant_path("src/m.py", roots) == "src/m.py"
    assert meant_path("src/missing.py:4", roots) == "src/missing.py:4"  # nothing to mean
