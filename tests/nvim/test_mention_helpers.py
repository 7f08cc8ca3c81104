"""Issue 31 §1–2 in Neovim: the `@file` completion lists the workspace with git (or rg) taken
from outside the workspace, without our environment, and with the project's program-running
git settings off — a repository whose ``.git/config`` names programs and a ``PATH`` whose first
entry is the project's ``.venv/bin`` holding a fake ``git`` and ``rg`` start none of them."""

from __future__ import annotations

import os
from pathlib import Path

import pynvim

from tests.support.hostile_repo import MECHANISMS, hostile_repository, markers_left, plant_programs

FILES = "return require('lsp_agent.mentions').files(...)"


def test_the_file_list_runs_no_program_of_the_project(
    nvim: pynvim.Nvim, workspace: Path, tmp_path: Path
) -> None:
    ws = Path(os.path.realpath(workspace))
    markers = tmp_path / "markers"
    hostile_repository(ws, markers, sorted(MECHANISMS))
    plant_programs(ws / ".venv" / "bin", markers, ("git", "rg", "env", "sh"))
    planted = os.pathsep.join([str(ws / ".venv" / "bin"), ".", os.environ["PATH"]])
    nvim.exec_lua(
        "vim.env.PATH = ...; vim.env.ANTHROPIC_API_KEY = 'sk-ant-nvim-key-0123456789'", planted
    )

    files = nvim.exec_lua(FILES, str(ws))

    assert "a.txt" in files
    assert "c.txt" in files  # untracked, still listed
    assert markers_left(markers) == {}
    git = nvim.exec_lua("return require('lsp_agent.mentions').program('git', ...)", str(ws))
    assert git is not None
    assert not git.startswith(str(ws))


def test_without_git_the_rg_fallback_is_not_a_planted_one(
    nvim: pynvim.Nvim, workspace: Path, tmp_path: Path
) -> None:
    ws = Path(os.path.realpath(workspace))
    markers = tmp_path / "markers"
    markers.mkdir()
    (ws / "a.txt").write_text("a\n")
    plant_programs(ws / ".venv" / "bin", markers, ("rg",))
    (ws / ".venv" / "bin" / "git").write_text("#!/bin/sh\nexit 1\n")
    (ws / ".venv" / "bin" / "git").chmod(0o755)
    nvim.exec_lua("vim.env.PATH = ...", f"{ws / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")

    files = nvim.exec_lua(FILES, str(ws))

    assert "a.txt" in files
    assert markers_left(markers) == {}
