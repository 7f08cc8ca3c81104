"""Fixtures every level shares: isolated folders for each test, a workspace, the event store,
the fake LLM; and the ``e2e`` marker on the tests that start processes (``-m "not e2e"`` is
the quick run, see ``scripts/test --quick``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from lsp_agent.storage.event_log import SqliteEventStore, open_store
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm

TESTS = Path(__file__).parent
IN_PROCESS = frozenset(
    {
        "integration/test_event_store.py",
        "integration/test_session_config_e2e.py",
        "integration/test_snapshots.py",
        "reliability/test_fake_llm_faults.py",
        "reliability/test_write_failures.py",
    }
)
"""The modules outside ``unit/`` whose tests run in this process and take well under a second."""
STARTS_PROCESSES = frozenset(
    {
        "unit/lsp/test_startup_imports.py",
        "unit/lsp/test_serve_start.py",
        "unit/test_keyring_startup.py",
        "unit/test_cli_entry_imports.py",
        "unit/mcp/test_changes_and_remote.py",
        "unit/mcp/test_stdio_server.py",
        "unit/tools/test_bash.py",
        "unit/tools/test_bash_runner.py",
    }
)
"""The modules inside ``unit/`` whose tests start real commands, MCP servers or interpreters and
take seconds each: the slowest of the quick run (``--durations``), so they are ``e2e`` too."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``e2e`` every test outside ``tests/unit/`` (they start the server, the CLI, a real
    editor or bubblewrap, or take seconds), except the modules in ``IN_PROCESS``, and the
    modules in ``STARTS_PROCESSES``."""
    for item in items:
        where = item.path.relative_to(TESTS).as_posix()
        outside = not where.startswith("unit/") and where not in IN_PROCESS
        if outside or where in STARTS_PROCESSES:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(tmp_path / "data"))
    # Never the developer's real keyring: tests that need one select a file backend.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    # Every `run` in-process: a test of the warm path (tests/daemon/) turns it back on.
    monkeypatch.setenv("LSP_AGENT_NO_DAEMON", "1")
    for name in (
        "LSP_AGENT_MODEL",
        "LSP_AGENT_CONFIG",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder, ``<tmp>/ws``; a module that needs files in it overrides
    this fixture with one that takes ``workspace`` and writes them."""
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteEventStore]:
    """The SQLite event store, opened in ``<tmp>/data``."""
    async with await open_store(tmp_path / "data") as opened:
        yield opened


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """The fake LLM with an empty script (tests set theirs), serving from its own thread, so
    sync and async tests alike can drive it."""
    with running_fake_llm({"turns": []}) as server:
        yield server
