"""The workspace boundary: what is inside, what is not, and how it says so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.workspace.boundary import Outside, Resolved, WorkspaceBoundary, holding_folder


@pytest.fixture
def ws(ws: Path) -> Path:
    (ws / "src").mkdir()
    (ws / "src" / "main.py").write_text("print('hi')\n")
    return ws


def inside(result: Resolved | Outside) -> Resolved:
    assert isinstance(result, Resolved), result
    return result


def outside_of(result: Resolved | Outside) -> Outside:
    assert isinstance(result, Outside), result
    return result


def test_absolute_path_inside_resolves_with_a_relative_display(ws: Path) -> None:
    result = inside(WorkspaceBoundary([ws]).resolve(str(ws / "src" / "main.py")))

    assert result.path == str(ws / "src" / "main.py")
    assert result.root == str(ws)
    assert result.display == os.path.join("src", "main.py")


def test_relative_path_resolves_against_the_first_root(ws: Path, real_tmp: Path) -> None:
    second = real_tmp / "second"
    second.mkdir()

    result = inside(WorkspaceBoundary([ws, second]).resolve("src/main.py"))

    assert result.path == str(ws / "src" / "main.py")


def test_the_root_itself_displays_as_dot(ws: Path) -> None:
    assert inside(WorkspaceBoundary([ws]).resolve("")).display == "."
    assert inside(WorkspaceBoundary([ws]).resolve(str(ws))).display == "."


def test_tilde_is_not_expanded(ws: Path) -> None:
    result = inside(WorkspaceBoundary([ws]).resolve("~/notes.txt"))

    assert result.path == str(ws / "~" / "notes.txt")


def test_dotdot_escape_is_outside(ws: Path, outside: Path) -> None:
    result = outside_of(WorkspaceBoundary([ws]).resolve("../outside/secret.txt"))

    assert result.path == "../outside/secret.txt"
    assert result.resolved == str(outside / "secret.txt")
    assert result.roots == (str(ws),)


def test_dotdot_that_stays_inside_is_fine(ws: Path) -> None:
    result = inside(WorkspaceBoundary([ws]).resolve("src/../src/main.py"))

    assert result.path == str(ws / "src" / "main.py")


def test_absolute_path_outside_names_the_boundary_in_its_message(ws: Path) -> None:
    result = outside_of(WorkspaceBoundary([ws]).resolve("/etc/passwd"))

    assert result.message == (
        f"/etc/passwd is outside the workspace ({ws}); "
        "access to other folders needs the external_directory permission"
    )


def test_symlinked_file_pointing_outside_is_outside(ws: Path, outside: Path) -> None:
    (ws / "link.txt").symlink_to(outside / "secret.txt")

    result = outside_of(WorkspaceBoundary([ws]).resolve("link.txt"))

    assert result.resolved == str(outside / "secret.txt")
    assert str(outside / "secret.txt") in result.message


def test_symlinked_folder_pointing_outside_is_outside(ws: Path, outside: Path) -> None:
    (ws / "linked").symlink_to(outside, target_is_directory=True)
    boundary = WorkspaceBoundary([ws])

    assert outside_of(boundary.resolve("linked")).resolved == str(outside)
    assert outside_of(boundary.resolve("linked/secret.txt")).resolved == str(outside / "secret.txt")
    # A file that does not exist yet is judged by where its parent really is.
    assert outside_of(boundary.resolve("linked/new/file.txt")).resolved == str(
        outside / "new" / "file.txt"
    )


def test_dangling_symlink_pointing_outside_is_outside(ws: Path, outside: Path) -> None:
    (ws / "dangling").symlink_to(outside / "not-yet.txt")

    result = outside_of(WorkspaceBoundary([ws]).resolve("dangling"))

    assert result.resolved == str(outside / "not-yet.txt")


def test_symlink_inside_pointing_inside_is_fine(ws: Path) -> None:
    (ws / "alias.py").symlink_to(ws / "src" / "main.py")

    result = inside(WorkspaceBoundary([ws]).resolve("alias.py"))

    assert result.path == str(ws / "src" / "main.py")


def test_a_sibling_folder_sharing_the_prefix_is_outside(ws: Path, real_tmp: Path) -> None:
    other = real_tmp / "ws-other"
    other.mkdir()
    (other / "x.txt").write_text("x")

    result = outside_of(WorkspaceBoundary([ws]).resolve(str(other / "x.txt")))

    assert result.resolved == str(other / "x.txt")
    assert outside_of(WorkspaceBoundary([ws]).resolve("../ws-other"))


def test_a_file_that_does_not_exist_yet_inside_is_inside(ws: Path) -> None:
    result = inside(WorkspaceBoundary([ws]).resolve("new/dir/file.txt"))

    assert result.path == str(ws / "new" / "dir" / "file.txt")
    assert result.display == os.path.join("new", "dir", "file.txt")


def test_every_root_counts(ws: Path, real_tmp: Path) -> None:
    second = real_tmp / "second"
    second.mkdir()
    (second / "b.txt").write_text("b")
    boundary = WorkspaceBoundary([ws, second])

    result = inside(boundary.resolve(str(second / "b.txt")))

    assert result.root == str(second)
    assert result.display == "b.txt"
    assert outside_of(boundary.resolve("/etc/hosts")).roots == (str(ws), str(second))
    assert f"({ws}, {second})" in outside_of(boundary.resolve("/etc/hosts")).message


def test_roots_are_realpathed(ws: Path, real_tmp: Path) -> None:
    alias = real_tmp / "alias"
    alias.symlink_to(ws, target_is_directory=True)

    boundary = WorkspaceBoundary([alias])

    assert boundary.roots == (str(ws),)
    assert inside(boundary.resolve(str(alias / "src" / "main.py"))).display == os.path.join(
        "src", "main.py"
    )


def test_extra_roots_admit_their_files_with_an_absolute_display(ws: Path, outside: Path) -> None:
    boundary = WorkspaceBoundary([ws])
    target = str(outside / "secret.txt")

    result = inside(boundary.resolve(target, extra_roots=[outside]))

    assert result.root == str(outside)
    assert result.display == target
    assert isinstance(boundary.resolve(target), Outside)


def test_a_boundary_needs_a_root() -> None:
    with pytest.raises(ValueError, match="at least one root"):
        WorkspaceBoundary([])


def test_holding_folder_is_the_deepest_folder_around_the_path_else_the_first() -> None:
    folders = ["/ws", "/ws/inner", "/other"]
    assert holding_folder("/ws/inner/a.py", folders) == "/ws/inner"
    assert holding_folder("/ws/a.py", folders) == "/ws"
    assert holding_folder("/ws-sibling/a.py", folders) == "/ws"  # not inside: the first folder
    assert holding_folder("/other", folders) == "/other"
    assert holding_folder("/ws/a.py", []) is None
