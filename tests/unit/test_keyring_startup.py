"""Issue 38: a start reads the keyring only for the providers ``auth set`` listed (their keys
are masked before anything reaches the model), a first start without the list probes them all
once and writes it, and choosing the backend starts no process (keyring's own discovery runs
``ldconfig`` and ``gcc`` on Linux, looking for the macOS libraries)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lsp_agent.auth.keyring_index import FILE_NAME, KeyringIndex
from lsp_agent.auth.keys import ProviderKeys, preload
from lsp_agent.config.settings import Settings
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.testing.file_keyring import BACKEND, FILE_ENV

OPENAI_KEY = "sk-proj-KEYRINGONLY-0123456789abcdefXYZ"
SETTINGS = Settings.model_validate({"model": "anthropic/claude-sonnet-4-5"})


class CountingStore:
    """A keyring that records which providers were read."""

    def __init__(self, keys: dict[str, str]) -> None:
        self.keys = keys
        self.read: list[str] = []

    def get(self, provider: str) -> str | None:
        self.read.append(provider)
        return self.keys.get(provider)


def start(env: dict[str, str], store: CountingStore, index: KeyringIndex) -> SecretFilter:
    secrets = SecretFilter({})
    preload(ProviderKeys(env, store=store, secrets=secrets), SETTINGS, index)
    return secrets


def test_without_a_list_every_provider_is_probed_once_and_the_list_written(
    tmp_path: Path,
) -> None:
    store = CountingStore({"openai": OPENAI_KEY})
    index = KeyringIndex(tmp_path / "keyring-providers.json")
    secrets = start({"ANTHROPIC_API_KEY": "sk-ant-env"}, store, index)
    assert sorted(store.read) == ["anthropic", "openai"]
    assert index.read() == frozenset({"openai"})
    assert OPENAI_KEY not in secrets.redact(f"key {OPENAI_KEY}")
    assert oct((tmp_path / "keyring-providers.json").stat().st_mode & 0o777) == "0o600"


def test_an_empty_list_means_no_keyring_read_at_all(tmp_path: Path) -> None:
    index = KeyringIndex(tmp_path / "keyring-providers.json")
    index.write([])
    store = CountingStore({"openai": OPENAI_KEY})
    start({"ANTHROPIC_API_KEY": "sk-ant-env"}, store, index)
    assert store.read == []


def test_a_listed_provider_is_read_and_masked_unless_its_variable_is_set(tmp_path: Path) -> None:
    index = KeyringIndex(tmp_path / "keyring-providers.json")
    index.write(["openai", "gone-from-the-config"])
    store = CountingStore({"openai": OPENAI_KEY})
    secrets = start({"ANTHROPIC_API_KEY": "sk-ant-env"}, store, index)
    assert store.read == ["openai"]
    assert secrets.redact(OPENAI_KEY) == "[redacted:OPENAI_API_KEY]"
    store.read.clear()
    start({"ANTHROPIC_API_KEY": "sk-ant-env", "OPENAI_API_KEY": "sk-proj-env"}, store, index)
    assert store.read == []


def test_auth_set_and_remove_keep_the_list_and_a_garbled_list_is_no_list(
    tmp_path: Path,
) -> None:
    index = KeyringIndex(tmp_path / "keyring-providers.json")
    index.add("openai")  # no list yet: the next start probes everything anyway
    assert index.read() is None
    index.write([])
    index.add("openai")
    index.add("work")
    assert index.read() == frozenset({"openai", "work"})
    index.remove("openai")
    assert json.loads(index.path.read_text()) == {"providers": ["work"]}
    index.path.write_text('{"providers": "openai"}')
    assert index.read() is None


AUDIT = """
import json, sys
spawned = []
sys.addaudithook(lambda event, args: spawned.append(args[0]) if event == "subprocess.Popen" else 0)
from lsp_agent.auth.store import KeyStore
backend = KeyStore().backend()
print(json.dumps({"backend": backend, "spawned": [str(p) for p in spawned]}))
"""


def test_choosing_the_keyring_backend_starts_no_process() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHON_KEYRING_BACKEND"}
    done = subprocess.run(
        [sys.executable, "-c", AUDIT], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    chosen = json.loads(done.stdout)
    assert chosen["spawned"] == []
    assert chosen["backend"].startswith("keyring.backends.")


def test_auth_set_and_remove_update_the_list(tmp_path: Path) -> None:
    data = Path(os.environ["LSP_AGENT_DATA_DIR"])
    index = KeyringIndex(data / FILE_NAME)
    index.write([])  # a start has probed the keyring already
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": BACKEND, FILE_ENV: str(tmp_path / "k.json")}

    def auth(*args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "lsp_agent", "auth", *args],
            cwd=tmp_path,
            env=env,
            input=OPENAI_KEY,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr

    auth("set", "openai")
    assert index.read() == frozenset({"openai"})
    auth("remove", "openai")
    assert index.read() == frozenset()
