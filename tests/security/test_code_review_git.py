"""The agent's review of your changes runs git on the project's repository (issue 37 §1): on a
repository whose configuration and attributes use every mechanism that could start a program
(hooks, fsmonitor, filters, textconv, diff drivers, pager, aliases…), no program of the
repository runs, whichever changes are reviewed — and the model still gets the real diff."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lsp_agent.code_review.changes import Scope, review_changes
from lsp_agent.code_review.review import ReviewResult
from lsp_agent.core.stream_events import Finished, TextDelta
from lsp_agent.testing.provider import ScriptedProvider
from tests.support.hostile_repo import GIT, MECHANISMS, git, hostile_repository, markers_left


def stage_without_filters(ws: Path, name: str) -> None:
    """``git add name`` without the repository's filters (which break ``add`` itself)."""
    found = subprocess.run(
        [*GIT, "-c", "core.fsmonitor=false", "hash-object", "-w", "--no-filters", name],
        cwd=ws,
        check=True,
        capture_output=True,
        text=True,
    )
    blob = found.stdout.strip()
    git(ws, "-c", "core.fsmonitor=false", "update-index", "--cacheinfo", f"100644,{blob},{name}")


@pytest.fixture
def ws(workspace: Path) -> Path:
    return Path(os.path.realpath(workspace))


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        (Scope(), "+two, changed"),
        (Scope(staged=True), "+bee, staged"),
        (Scope(base="HEAD"), "+two, changed"),
    ],
)
async def test_a_review_runs_no_program_of_the_repository(
    ws: Path, tmp_path: Path, scope: Scope, expected: str
) -> None:
    markers = tmp_path / "markers"
    hostile_repository(ws, markers, sorted(MECHANISMS))
    (ws / "b.txt").write_text("bee, staged\n")
    stage_without_filters(ws, "b.txt")
    for name in list(os.listdir(markers)):  # the setup's own `git add` may fire some
        os.unlink(markers / name)
    provider = ScriptedProvider([[TextDelta(text="Fine."), Finished(reason="end_turn")]])

    result = await review_changes(str(ws), scope, provider=provider, model="m", avoid=(str(ws),))

    assert markers_left(markers) == {}
    assert isinstance(result, ReviewResult), result
    assert result.summary == "Fine."
    [request] = provider.requests
    assert expected in str(request.messages[0].parts[0])
