"""``run`` with a config mistake: exit 2 before anything runs, and one line naming the file and
the key — a misspelled permission and an unknown provider alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.testing.cli import run_cli
from tests.support.user_config import write_user_config


@pytest.mark.parametrize(
    ("config", "said"),
    [
        (
            {"model": "anthropic/claude-test", "permission": {"bassh": "allow"}},
            "key 'permission.bassh': unknown permission 'bassh' (did you mean 'bash'?)",
        ),
        (
            {"model": "foo/bar"},
            "key 'model': unknown provider 'foo' (configure it under providers)",
        ),
    ],
)
def test_a_config_mistake_exits_2_naming_file_and_key(
    workspace: Path, config: dict[str, object], said: str
) -> None:
    path = write_user_config(config)

    result = run_cli("run", "hi", cwd=workspace, env={"ANTHROPIC_API_KEY": "k"})

    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"{path}: {said}")
    assert "Traceback" not in result.stderr
