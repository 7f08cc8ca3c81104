"""Issue 38: the ``lsp-agent`` entry parses its command line with nothing heavy loaded, so the
warm path (``daemon/client.py``) and a command that ends early pay for none of it: not
asyncio, the runtime, the store, the settings' models or a provider SDK. A fresh interpreter,
so nothing else imported them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

NOT_YET = (
    "asyncio",
    "sqlite3",
    "pydantic",
    "keyring",
    "anthropic",
    "openai",
    "httpx",
    "lsp_agent.app",
    "lsp_agent.runtime",
    "lsp_agent.config.settings",
    "lsp_agent.storage",
)


def test_parsing_a_run_imports_nothing_heavy() -> None:
    probe = (
        "import json, sys\n"
        "from lsp_agent.cli import build_parser\n"
        "build_parser().parse_args(['run', '--model', 'anthropic/x', 'hello'])\n"
        f"print(json.dumps([m for m in {list(NOT_YET)!r} if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == []


def test_run_mode_choices_still_come_from_the_modes_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from lsp_agent.cli import build_parser
    from lsp_agent.core.modes import CLIENT_MODES

    parser = build_parser()
    for mode in CLIENT_MODES:
        assert parser.parse_args(["run", "--mode", mode, "x"]).mode == mode
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--mode", "bogus", "x"])
    assert ", ".join(repr(m) for m in CLIENT_MODES) in capsys.readouterr().err
