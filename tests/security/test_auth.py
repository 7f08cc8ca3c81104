"""Issue 18 scope 3: provider keys from the environment or the OS keyring
(`lsp-agent auth set|remove|status`), and a keyring key is as protected as an environment
key: masked in everything the model sees, absent from the database, never in a child's
environment."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.auth.keys import ProviderKeys
from lsp_agent.auth.store import KeyStore, StoreResult
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.testing.cli import run_cli as cli
from lsp_agent.testing.fake_llm import running_fake_llm
from lsp_agent.testing.file_keyring import BACKEND, FILE_ENV

KEYRING_KEY = "sk-ant-KEYRINGONLY-7f3Q9zLm2Xv8Tn4Wp1Ks6Hd0Jf5Gb"
ENV_KEY = "sk-ant-ENVIRONMENT-1a2B3c4D5e6F7g8H9i0JkLmN"


@pytest.fixture
def keyring_env(tmp_path: Path) -> dict[str, str]:
    """The test's file keyring, selected by name in every child process."""
    return {"PYTHON_KEYRING_BACKEND": BACKEND, FILE_ENV: str(tmp_path / "keyring.json")}


def auth(
    *args: str, cwd: Path, env: dict[str, str], key: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``lsp-agent auth ARGS`` with ``key`` on stdin (not a terminal: read whole)."""
    import sys

    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", "auth", *args],
        cwd=cwd,
        env={**os.environ, **env},
        input=key or "",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def sent_key(headers: dict[str, str]) -> str | None:
    """The key a request authenticated with (the SDK sends it in one of two headers)."""
    bearer = headers.get("authorization", "")
    return headers.get("x-api-key") or (bearer[7:] if bearer.startswith("Bearer ") else None)


def stored(env: dict[str, str]) -> dict[str, Any]:
    path = Path(env[FILE_ENV])
    return json.loads(path.read_text()) if path.exists() else {}


def test_set_status_remove_store_the_key_under_lsp_agent_and_never_print_it(
    tmp_path: Path, keyring_env: dict[str, str]
) -> None:
    done = auth("set", "anthropic", cwd=tmp_path, env=keyring_env, key=KEYRING_KEY + "\n")
    assert done.returncode == 0, done.stderr
    assert stored(keyring_env) == {"lsp-agent": {"anthropic": KEYRING_KEY}}

    status = auth("status", cwd=tmp_path, env=keyring_env)
    assert status.returncode == 0, status.stderr
    assert "anthropic: keyring" in status.stdout
    assert "openai: missing: set OPENAI_API_KEY" in status.stdout
    with_env = auth(
        "status", "anthropic", cwd=tmp_path, env={**keyring_env, "ANTHROPIC_API_KEY": ENV_KEY}
    )
    assert "anthropic: environment (ANTHROPIC_API_KEY)" in with_env.stdout

    removed = auth("remove", "anthropic", cwd=tmp_path, env=keyring_env)
    assert removed.returncode == 0, removed.stderr
    assert stored(keyring_env) == {"lsp-agent": {}}
    again = auth("remove", "anthropic", cwd=tmp_path, env=keyring_env)
    assert again.returncode == 1
    assert "no key is stored for anthropic" in again.stderr
    for result in (done, status, with_env, removed, again):
        assert KEYRING_KEY not in result.stdout + result.stderr
        assert ENV_KEY not in result.stdout + result.stderr


def test_the_key_is_never_taken_from_the_command_line(
    tmp_path: Path, keyring_env: dict[str, str]
) -> None:
    result = auth("set", "anthropic", KEYRING_KEY, cwd=tmp_path, env=keyring_env)
    assert result.returncode == 2
    assert stored(keyring_env) == {}
    empty = auth("set", "anthropic", cwd=tmp_path, env=keyring_env, key="\n")
    assert empty.returncode == 2
    assert "no key given" in empty.stderr
    assert stored(keyring_env) == {}


def test_an_unknown_provider_or_one_without_a_key_variable_is_refused(
    tmp_path: Path, keyring_env: dict[str, str]
) -> None:
    result = auth("set", "nope", cwd=tmp_path, env=keyring_env, key=KEYRING_KEY)
    assert result.returncode == 2
    assert "unknown provider 'nope' (known: anthropic, openai)" in result.stderr
    config = tmp_path / "home" / ".config" / "lsp-agent"
    config.mkdir(parents=True)
    (config / "config.json").write_text(
        json.dumps(
            {"providers": {"local": {"type": "openai-compatible", "base_url": "http://x/v1"}}}
        )
    )
    local = auth("set", "local", cwd=tmp_path, env=keyring_env, key=KEYRING_KEY)
    assert local.returncode == 2
    assert "sends no key" in local.stderr
    assert "local: no key needed" in auth("status", cwd=tmp_path, env=keyring_env).stdout
    assert stored(keyring_env) == {}


@pytest.mark.parametrize(
    "backend", ["keyring.backends.fail.Keyring", "keyring.backends.null.Keyring"]
)
def test_without_a_usable_keyring_set_names_the_variable_to_use_instead(
    tmp_path: Path, backend: str
) -> None:
    env = {"PYTHON_KEYRING_BACKEND": backend}
    result = auth("set", "anthropic", cwd=tmp_path, env=env, key=KEYRING_KEY)
    assert result.returncode == 1
    assert "no usable keyring backend here" in result.stderr
    assert "set ANTHROPIC_API_KEY in the environment instead" in result.stderr
    assert "Traceback" not in result.stderr
    status = auth("status", cwd=tmp_path, env=env)
    assert status.returncode == 0
    assert "keyring: no usable keyring backend here" in status.stdout
    assert "anthropic: missing: set ANTHROPIC_API_KEY\n" in status.stdout
    # a run falls back to the environment and fails cleanly without it
    run = cli("run", "--model", "anthropic/claude-test", "hi", cwd=tmp_path, env=env)
    assert run.returncode == 1
    assert "ANTHROPIC_API_KEY" in run.stderr
    assert "Traceback" not in run.stderr


class _Store:
    """A keyring that counts its reads."""

    def __init__(self, keys: dict[str, str]) -> None:
        self.keys = keys
        self.reads = 0

    def get(self, provider: str) -> str | None:
        self.reads += 1
        return self.keys.get(provider)


def test_the_environment_comes_first_then_the_keyring_whose_key_is_registered() -> None:
    now = [0.0]
    store = _Store({"anthropic": KEYRING_KEY})
    secrets = SecretFilter({})
    env: dict[str, str] = {}
    keys = ProviderKeys(env, store=store, secrets=secrets, ttl=60, clock=lambda: now[0])
    assert keys.key("anthropic", "ANTHROPIC_API_KEY") == KEYRING_KEY
    assert keys.source("anthropic", "ANTHROPIC_API_KEY") == "keyring"
    assert (
        secrets.redact(f"x {KEYRING_KEY[::-1]} y") == "x [redacted:ANTHROPIC_API_KEY (reversed)] y"
    )
    assert store.reads == 1  # cached
    env["ANTHROPIC_API_KEY"] = ENV_KEY
    assert keys.key("anthropic", "ANTHROPIC_API_KEY") == ENV_KEY
    assert keys.source("anthropic", "ANTHROPIC_API_KEY") == "env"
    del env["ANTHROPIC_API_KEY"]
    store.keys["anthropic"] = "sk-ant-ROTATED-0123456789abcdef"
    assert keys.key("anthropic", "ANTHROPIC_API_KEY") == KEYRING_KEY  # within the ttl
    now[0] = 61.0
    assert keys.key("anthropic", "ANTHROPIC_API_KEY") == "sk-ant-ROTATED-0123456789abcdef"
    assert keys.source("openai", "OPENAI_API_KEY") == "missing"


def test_a_run_authenticates_with_the_keyring_key_alone_and_keeps_it_from_everything(
    tmp_path: Path, keyring_env: dict[str, str]
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert auth("set", "anthropic", cwd=tmp_path, env=keyring_env, key=KEYRING_KEY).returncode == 0
    (workspace / "copy.txt").write_text(f"the key: {KEYRING_KEY}\n")
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read", "input": {"file_path": str(workspace / "copy.txt")}}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "env | grep -c KEYRINGONLY; true"}}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "rev copy.txt"}}]},
        {"text": "finished"},
    ]
    with running_fake_llm(script) as server:
        env = {**keyring_env, "ANTHROPIC_BASE_URL": server.anthropic_base_url}
        result = cli(
            "run", "--yes", "--model", "anthropic/claude-test", "go", cwd=workspace, env=env
        )
        requests = [r for r in server.requests if r.path.endswith("/messages")]
    assert result.returncode == 0, result.stderr
    assert requests
    assert {sent_key(r.headers) for r in requests} == {KEYRING_KEY}
    last = requests[-1].body
    results = [
        json.dumps(block["content"])
        for message in last["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    read, grep, rev = results
    assert "[redacted:ANTHROPIC_API_KEY]" in read
    assert KEYRING_KEY not in read
    assert grep.startswith('"0')  # the key is in no child's environment
    assert "[redacted:ANTHROPIC_API_KEY (reversed)]" in rev
    assert KEYRING_KEY[::-1] not in rev
    session = json.loads(cli("sessions", "list", "--json", cwd=workspace, env=env).stdout)
    (only,) = session["sessions"]
    exported = cli(
        "sessions", "export", only["sessionId"], "--format", "json", cwd=workspace, env=env
    )
    assert exported.returncode == 0, exported.stderr
    assert KEYRING_KEY not in exported.stdout
    assert KEYRING_KEY[::-1] not in exported.stdout
    data_dir = Path(os.environ["LSP_AGENT_DATA_DIR"])
    stored_files = b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())
    assert KEYRING_KEY.encode() not in stored_files
    assert KEYRING_KEY not in result.stdout + result.stderr


def test_the_environment_key_wins_over_the_keyring(
    tmp_path: Path, keyring_env: dict[str, str]
) -> None:
    assert auth("set", "anthropic", cwd=tmp_path, env=keyring_env, key=KEYRING_KEY).returncode == 0
    with running_fake_llm([{"text": "ok"}]) as server:
        env = {
            **keyring_env,
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": ENV_KEY,
        }
        result = cli("run", "--model", "anthropic/claude-test", "hi", cwd=tmp_path, env=env)
        requests = [r for r in server.requests if r.path.endswith("/messages")]
    assert result.returncode == 0, result.stderr
    assert {sent_key(r.headers) for r in requests} == {ENV_KEY}


def test_models_of_a_provider_whose_key_is_in_the_keyring_are_offered() -> None:
    from lsp_agent.config.models import ConfiguredModels
    from lsp_agent.config.resolve import resolve_model
    from lsp_agent.config.settings import Settings

    settings = Settings.model_validate({"model": "anthropic/claude-sonnet-4-5"})
    keys = ProviderKeys({}, store=_Store({"openai": "sk-proj-KEYRING0123456789abcdef"}))
    without = ConfiguredModels(settings, {}, resolve_model(settings))
    assert not any(c.ref.startswith("openai/") for c in without.offered())
    models = ConfiguredModels(settings, {}, resolve_model(settings), stored_key=keys.stored)
    assert any(c.ref.startswith("openai/") for c in models.offered())
    provider, _info = models.resolve("openai/gpt-5")
    assert provider.name == "openai"


def test_set_from_a_terminal_asks_with_a_hidden_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse
    import io

    from lsp_agent.auth import command

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    class Store(KeyStore):
        def __init__(self) -> None:
            self.keys: dict[str, str] = {}

        def unusable(self) -> str | None:
            return None

        def backend(self) -> str:
            return "test"

        def set(self, provider: str, key: str) -> StoreResult:
            self.keys[provider] = key
            return StoreResult()

    prompts: list[str] = []

    def hidden(prompt: str) -> str:
        prompts.append(prompt)
        return KEYRING_KEY

    monkeypatch.setattr("getpass.getpass", hidden)
    store = Store()
    out, err = io.StringIO(), io.StringIO()
    args = argparse.Namespace(verb="set", provider="anthropic")
    code = command.run_auth(
        args,
        env={},
        cwd=tmp_path,
        stdin=Terminal(),
        out=out,
        err=err,
        store=store,
    )
    assert code == 0, err.getvalue()
    assert prompts == ["anthropic key (input hidden): "]
    assert store.keys == {"anthropic": KEYRING_KEY}
    assert KEYRING_KEY not in out.getvalue() + err.getvalue()
