"""``python -m evals``'s command line: the task list, and a run that names no model refused."""

from __future__ import annotations

import pytest

from evals.__main__ import main
from evals.tasks import TASKS


def test_list_names_every_task_and_its_front(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [task.name for task in TASKS]
    assert any(line.endswith("(run, serve)") for line in lines)


def test_a_real_run_needs_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2
    assert "--model" in capsys.readouterr().err


def test_a_glob_that_matches_nothing_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--scripted", "--tasks", "no-such-*"]) == 2
    assert "no task matches" in capsys.readouterr().err
